import type { NodeStatus, NodesView } from '@heatsink/protocol'
import { bytes, percent, rate } from '../format.js'
import { keyHref, nodeHref } from './routes.js'

/** Every Redis node with its load in the latest sample and the hot keys it owns. */
export function NodesPanel({ view, error }: { view: NodesView | null; error: string | null }) {
  return (
    <section>
      <header class="section-head">
        <h2>Redis nodes ({view?.nodes.length ?? 0})</h2>
        {view?.imbalance == null ? null : (
          <span class="facts" data-testid="imbalance">
            imbalance {view.imbalance.toFixed(2)} (busiest master over the mean)
          </span>
        )}
      </header>
      {error === null ? null : <p class="status error">Could not read the nodes: {error}</p>}
      {view === null || view.nodes.length === 0 ? (
        <p class="empty">
          {view?.intervalMs === 0
            ? 'Node sampling is off (HEATSINK_NODE_SAMPLE_MS=0).'
            : 'No node sample yet: the replica holding the metrics lease samples every node once a second.'}
        </p>
      ) : (
        <div class="scroll">
          <table data-testid="nodes">
            <thead>
              <tr>
                <th>Node</th>
                <th>Role</th>
                <th class="num">Ops/s</th>
                <th class="num">CPU</th>
                <th class="num">Memory</th>
                <th class="num">Clients</th>
                <th class="num">Hits / misses per s</th>
                <th class="num">Net in / out per s</th>
                <th class="num">Lag</th>
                <th>Hot keys (share of the node's ops)</th>
              </tr>
            </thead>
            <tbody>
              {view.nodes.map((node) => (
                <NodeRow key={node.node} node={node} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  )
}

function NodeRow({ node }: { node: NodeStatus }) {
  const f = node.figures
  return (
    <tr data-node={node.node} class={node.up ? '' : 'stale'}>
      <td class="key">
        <a href={nodeHref(node.node)}>{node.node}</a>
      </td>
      <td>
        {node.role}
        {node.master === null ? '' : ` of ${node.master}`}
        {node.up ? '' : ' · DOWN'}
      </td>
      <td class="num">{rate(f?.opsPerSecond)}</td>
      <td class="num">{percent(f?.cpuRatio)}</td>
      <td class="num">
        {bytes(f?.usedMemoryBytes)}
        {f == null || f.maxmemoryBytes === 0 ? '' : ` / ${bytes(f.maxmemoryBytes)}`}
      </td>
      <td class="num">
        {f?.connectedClients ?? '–'}
        {f == null || f.blockedClients === 0 ? '' : ` (${f.blockedClients} blocked)`}
      </td>
      <td class="num">
        {rate(f?.keyspaceHitsPerSecond)} / {rate(f?.keyspaceMissesPerSecond)}
      </td>
      <td class="num">
        {bytes(f?.networkInBytesPerSecond)} / {bytes(f?.networkOutBytesPerSecond)}
      </td>
      <td class="num">{f?.replicationLagSeconds == null ? '–' : `${f.replicationLagSeconds} s`}</td>
      <td data-testid="node-hot-keys">
        {node.hotKeys.length === 0
          ? '–'
          : node.hotKeys.map((hot, i) => (
              <span key={hot.key}>
                {i === 0 ? '' : ', '}
                <a href={keyHref(hot.key)} class="key">
                  {hot.key}
                </a>
                {hot.state === 'warming' ? ' (warming' : ` (${hot.mitigation}`}
                {hot.shareOfNodeOps === null ? ')' : `, ${percent(hot.shareOfNodeOps)})`}
              </span>
            ))}
      </td>
    </tr>
  )
}
