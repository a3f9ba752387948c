import type { KeyStatsBody, LiveState, MissStorm, RegistryChange } from '@heatsink/protocol'
import { useEffect, useState } from 'preact/hooks'
import { demote, getJson, keyUrls } from '../api.js'
import { percent, rate, times } from '../format.js'
import { loadToken } from '../token.js'
import { type AgentKeyStats, AgentStatsTable } from './agent-stats-table.js'
import { EventsTable } from './events-table.js'
import { MissStormsTable } from './miss-storms-table.js'
import { PromoteForm } from './promote-form.js'
import { type WriteStatus, WriteStatusLine } from './write-status.js'

interface KeyDetail {
  stats: KeyStatsBody | null
  agents: AgentKeyStats[]
  events: RegistryChange[]
  missStorms: MissStorm[]
}

/** One key: its registry entry, live statistics overall and per agent, split shard counts, and its history. */
export function KeyPage({ keyName, state, version }: { keyName: string; state: LiveState; version: number }) {
  const [detail, setDetail] = useState<KeyDetail | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [status, setStatus] = useState<WriteStatus>({ kind: 'idle' })
  const entry = state.hotkeys.find((hot) => hot.key === keyName)

  // Re-read with every frame (`version` changes), so the page stays as live as the overview.
  useEffect(() => {
    let current = true
    const urls = keyUrls(keyName)
    Promise.all([
      getJson<KeyStatsBody>(urls.stats),
      getJson<{ agents: AgentKeyStats[] }>(urls.agents),
      getJson<{ events: RegistryChange[]; missStorms?: MissStorm[] }>(urls.events),
    ]).then(
      ([stats, agents, events]) => {
        if (!current) return
        setDetail({
          stats,
          agents: agents?.agents ?? [],
          events: events?.events ?? [],
          missStorms: events?.missStorms ?? [],
        })
        setError(null)
      },
      (failure: Error) => current && setError(failure.message),
    )
    return () => {
      current = false
    }
  }, [keyName, version])

  const onDemote = async () => {
    setStatus({ kind: 'busy' })
    try {
      await demote(keyName, loadToken())
      setStatus({
        kind: 'done',
        message: `${keyName} demoted: agents stop mitigating it within a heartbeat.`,
      })
    } catch (failure) {
      setStatus({ kind: 'failed', message: `Demote failed: ${(failure as Error).message}` })
    }
  }

  const stats = detail?.stats ?? null
  return (
    <main class="key-page">
      <p>
        <a href="#/">← all hot keys</a>
      </p>
      <h2 class="key">{keyName}</h2>
      {error === null ? null : <p class="status error">Could not read the key's statistics: {error}</p>}
      <section>
        <h3>Registry</h3>
        {entry === undefined ? (
          <p>Not in the registry now.</p>
        ) : (
          <p data-testid="key-entry">
            {entry.mitigation}
            {entry.mitigation === 'split' ? ` over ${entry.splitFactor} shards` : ''}, {entry.source}, version{' '}
            {entry.version}
            {entry.expiresAt === null
              ? ''
              : `, expires ${new Date(entry.expiresAt).toLocaleTimeString('en-GB')}`}{' '}
            <button type="button" class="danger" onClick={onDemote} disabled={status.kind === 'busy'}>
              Demote
            </button>
          </p>
        )}
        <WriteStatusLine status={status} />
      </section>
      <section>
        <h3>Live statistics</h3>
        {stats === null ? (
          <p class="empty">No recent traffic data for this key.</p>
        ) : (
          <dl class="stats" data-testid="key-stats">
            <dt>Req/s (cluster-wide)</dt>
            <dd>{rate(stats.requestsPerSecond)}</dd>
            <dt>Hit rate</dt>
            <dd>{percent(stats.hitRate)}</dd>
            <dt>L1 hit ratio</dt>
            <dd>{percent(stats.localCacheHitRatio)}</dd>
            <dt>Collapse ratio</dt>
            <dd>{times(stats.coalesceCollapseRatio)}</dd>
            <dt>Agents reporting</dt>
            <dd>{stats.agents}</dd>
            {stats.commandForms !== undefined ? (
              <>
                <dt>Commands seen</dt>
                <dd data-testid="command-forms">{stats.commandForms.join(' · ') || '–'}</dd>
                <dt>Split kind</dt>
                <dd>{stats.splitKind ?? 'none: never split automatically'}</dd>
              </>
            ) : null}
            {stats.watchAbortsPerSecond !== undefined ? (
              <>
                <dt>Transactions aborted by WATCH/s</dt>
                <dd data-testid="write-contention" class={stats.contended ? 'flagged' : undefined}>
                  {rate(stats.watchAbortsPerSecond)}
                  {stats.contended ? ' · sustained write contention (see docs/operations.md)' : ''}
                </dd>
              </>
            ) : null}
            {stats.splitShardCounts.length > 0 ? (
              <>
                <dt>Requests per shard</dt>
                <dd>{stats.splitShardCounts.join(' · ')}</dd>
              </>
            ) : null}
          </dl>
        )}
        <AgentStatsTable agents={detail?.agents ?? []} />
      </section>
      <section>
        <h3>Promote or change</h3>
        <PromoteForm initialKey={keyName} />
      </section>
      <section>
        <h3>History</h3>
        <EventsTable events={detail?.events ?? []} showKey={false} />
      </section>
      <section>
        <h3>Miss storms</h3>
        <MissStormsTable storms={detail?.missStorms ?? []} showKey={false} />
      </section>
    </main>
  )
}
