import type { MissStorm } from '@heatsink/protocol'
import { clock, rate } from '../format.js'
import { keyHref } from './routes.js'

const ACTIONS: Record<MissStorm['action'], (storm: MissStorm) => string> = {
  coalesce_applied: () => 'coalesce applied',
  already_mitigated: (storm) => `none: already ${storm.mitigation ?? 'mitigated'}`,
  promotion_failed: () => 'coalescing failed (see the aggregator log)',
}

/** Miss storms, newest first: the key, the node that owns it, how hard it missed, and what Heatsink did. */
export function MissStormsTable({ storms, showKey = true }: { storms: MissStorm[]; showKey?: boolean }) {
  if (storms.length === 0) return <p class="empty">No miss storm yet.</p>
  return (
    <div class="scroll">
      <table data-testid="miss-storms">
        <thead>
          <tr>
            <th>Time</th>
            {showKey ? <th>Key</th> : null}
            <th>Node</th>
            <th class="num">Misses/s</th>
            <th class="num">Baseline/s</th>
            <th>Action</th>
          </tr>
        </thead>
        <tbody>
          {storms.map((storm) => (
            <tr key={storm.id} data-key={storm.key}>
              <td>{clock(storm.at)}</td>
              {showKey ? (
                <td class="key">
                  <a href={keyHref(storm.key)}>{storm.key}</a>
                </td>
              ) : null}
              <td>{storm.node ?? '–'}</td>
              <td class="num">{rate(storm.missesPerSecond)}</td>
              <td class="num">{rate(storm.baselinePerSecond)}</td>
              <td>{ACTIONS[storm.action](storm)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
