import type { NodeDetail } from '@heatsink/protocol'
import { bytes, clock, percent, rate } from '../format.js'
import { usePolled } from '../use-polled.js'
import { RateChart } from './rate-chart.js'
import { keyHref } from './routes.js'

/** One Redis node: charts of its ops/s and CPU, its figures, its busiest commands' latency, its hot keys. */
export function NodePage({ node, version }: { node: string; version: number }) {
  const { data, error } = usePolled<NodeDetail>(`nodes/${encodeURIComponent(node)}`, version)
  const times = data?.history.map((point) => point.at / 1000) ?? []
  const f = data?.figures ?? null
  return (
    <main class="node-page">
      <p>
        <a href="#/">← overview</a>
      </p>
      <h2 class="key">{node}</h2>
      {error === null ? null : <p class="status error">Could not read the node: {error}</p>}
      {data === null ? (
        <p class="empty">This node is not in the latest sample.</p>
      ) : (
        <>
          <p data-testid="node-state">
            {data.role}
            {data.master === null ? '' : ` of ${data.master}`} · {data.up ? 'up' : `DOWN: ${data.error}`}
            {data.sampledAt === null ? '' : ` · sampled ${clock(data.sampledAt)}`}
          </p>
          <section class="charts">
            <RateChart
              title="Commands per second"
              times={times}
              series={[{ label: 'ops/s', color: '#1c7ed6', values: data.history.map((p) => p.opsPerSecond) }]}
              testId="node-ops-chart"
            />
            <RateChart
              title="CPU (% of one core)"
              times={times}
              series={[
                {
                  label: 'CPU %',
                  color: '#d9480f',
                  values: data.history.map((p) => (p.cpuRatio === null ? null : p.cpuRatio * 100)),
                },
              ]}
              testId="node-cpu-chart"
            />
          </section>
          <section>
            <h3>Hot keys on this node</h3>
            {data.hotKeys.length === 0 ? (
              <p class="empty">No registered or warming key lives on this node.</p>
            ) : (
              <div class="scroll">
                <table data-testid="node-hot-keys-table">
                  <thead>
                    <tr>
                      <th>Key</th>
                      <th>State</th>
                      <th class="num">Req/s (cluster-wide)</th>
                      <th class="num">Reaching the node/s</th>
                      <th class="num">Share of node ops</th>
                      <th class="num">Node ops/s before → after</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.hotKeys.map((hot) => (
                      <tr key={hot.key} data-key={hot.key}>
                        <td class="key">
                          <a href={keyHref(hot.key)}>{hot.key}</a>
                        </td>
                        <td>{hot.state === 'warming' ? 'warming' : hot.mitigation}</td>
                        <td class="num">{rate(hot.requestsPerSecond)}</td>
                        <td class="num">{rate(hot.redisOpsPerSecond)}</td>
                        <td class="num">{percent(hot.shareOfNodeOps)}</td>
                        <td class="num">
                          {rate(hot.nodeOpsBefore)} → {rate(hot.nodeOpsAfter)}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </section>
          {f === null ? null : (
            <section>
              <h3>Latest sample</h3>
              <dl class="stats" data-testid="node-figures">
                <dt>Ops/s</dt>
                <dd>{rate(f.opsPerSecond)}</dd>
                <dt>CPU</dt>
                <dd>{percent(f.cpuRatio)} of one core</dd>
                <dt>Memory</dt>
                <dd>
                  {bytes(f.usedMemoryBytes)} of{' '}
                  {f.maxmemoryBytes === 0 ? 'no limit' : bytes(f.maxmemoryBytes)}
                </dd>
                <dt>Clients</dt>
                <dd>
                  {f.connectedClients} connected, {f.blockedClients} blocked
                </dd>
                <dt>Keyspace hits / misses per second</dt>
                <dd>
                  {rate(f.keyspaceHitsPerSecond)} / {rate(f.keyspaceMissesPerSecond)}
                </dd>
                <dt>Network in / out per second</dt>
                <dd>
                  {bytes(f.networkInBytesPerSecond)} / {bytes(f.networkOutBytesPerSecond)}
                </dd>
                <dt>Evicted keys</dt>
                <dd>
                  {f.evictedKeys} ({rate(f.evictedKeysPerSecond)}/s)
                </dd>
                {f.replicationLagSeconds === null ? null : (
                  <>
                    <dt>Replication lag</dt>
                    <dd>
                      {f.replicationLagSeconds} s, {bytes(f.replicationBehindBytes)} behind
                    </dd>
                  </>
                )}
              </dl>
              <h3>Latency of the busiest commands (µs, since the node started)</h3>
              <div class="scroll">
                <table data-testid="node-latency">
                  <thead>
                    <tr>
                      <th>Command</th>
                      <th class="num">Calls</th>
                      <th class="num">p50</th>
                      <th class="num">p99</th>
                      <th class="num">p99.9</th>
                    </tr>
                  </thead>
                  <tbody>
                    {f.latency.map((command) => (
                      <tr key={command.command}>
                        <td>{command.command}</td>
                        <td class="num">{command.calls.toLocaleString('en')}</td>
                        <td class="num">{command.p50Usec ?? '–'}</td>
                        <td class="num">{command.p99Usec ?? '–'}</td>
                        <td class="num">{command.p999Usec ?? '–'}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </section>
          )}
        </>
      )}
    </main>
  )
}
