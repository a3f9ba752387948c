/** One agent's latest window of a key's statistics (GET /hotkeys/{key}/agents). */
export interface AgentKeyStats {
  agentId: string
  l1Hits: number
  l1Misses: number
  misses: number
  coalescedWaiters: number
  upstreamLoads: number
  staleServes: number
  timeouts: number
  splitShardCounts: number[]
}

/** A key's statistics per agent, one row each. */
export function AgentStatsTable({ agents }: { agents: AgentKeyStats[] }) {
  if (agents.length === 0) return null
  return (
    <div class="scroll">
      <table>
        <thead>
          <tr>
            <th>Agent</th>
            <th class="num">L1 hits</th>
            <th class="num">L1 misses</th>
            <th class="num">Misses</th>
            <th class="num">Coalesced</th>
            <th class="num">Loads</th>
            <th class="num">Stale serves</th>
            <th class="num">Timeouts</th>
            <th>Shards</th>
          </tr>
        </thead>
        <tbody>
          {agents.map((a) => (
            <tr key={a.agentId}>
              <td class="key">{a.agentId}</td>
              <td class="num">{a.l1Hits}</td>
              <td class="num">{a.l1Misses}</td>
              <td class="num">{a.misses}</td>
              <td class="num">{a.coalescedWaiters}</td>
              <td class="num">{a.upstreamLoads}</td>
              <td class="num">{a.staleServes}</td>
              <td class="num">{a.timeouts}</td>
              <td>{a.splitShardCounts.join(' · ') || '–'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
