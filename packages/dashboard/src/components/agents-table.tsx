import type { AgentStatus } from '@heatsink/protocol'
import { duration, percent } from '../format.js'

/** The agents reporting, with a stale one (no report for three windows) marked in the row and the text. */
export function AgentsTable({ agents, registryVersion }: { agents: AgentStatus[]; registryVersion: number }) {
  if (agents.length === 0) return <p class="empty">No agent has reported in the last ten minutes.</p>
  return (
    <div class="scroll">
      <table data-testid="agents">
        <thead>
          <tr>
            <th>Agent</th>
            <th class="num">Last report</th>
            <th class="num">Reports dropped</th>
            <th class="num">Registry version</th>
            <th class="num">Sketch error mean / max</th>
            <th>State</th>
          </tr>
        </thead>
        <tbody>
          {agents.map((agent) => {
            const behind = agent.registryVersion !== null && agent.registryVersion < registryVersion
            return (
              <tr key={agent.agentId} class={agent.stale ? 'stale' : ''}>
                <td class="key">{agent.agentId}</td>
                <td class="num">{duration(agent.lastReportAgeMs)} ago</td>
                <td class="num">{agent.reportsDropped}</td>
                <td class="num">
                  {agent.registryVersion ?? '–'}
                  {behind ? ` (registry at ${registryVersion})` : ''}
                </td>
                <td class="num">{sketchError(agent.sketchError)}</td>
                <td>{agent.stale ? 'STALE: no recent report' : 'reporting'}</td>
              </tr>
            )
          })}
        </tbody>
      </table>
    </div>
  )
}

// Over the keys the agent samples (one in 256), its sketch's estimate against their exact count.
function sketchError(error: AgentStatus['sketchError']): string {
  if (error === null || error.sampled === 0) return '–'
  return `${percent(error.meanRelativeError)} / ${percent(error.maxRelativeError)} (${error.sampled} keys)`
}
