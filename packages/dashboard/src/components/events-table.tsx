import type { RegistryChange } from '@heatsink/protocol'
import { clock, duration, rate } from '../format.js'
import { keyHref } from './routes.js'

/** Registry changes, newest first: what, why, who, and how long detection took. */
export function EventsTable({ events, showKey = true }: { events: RegistryChange[]; showKey?: boolean }) {
  if (events.length === 0) return <p class="empty">No registry change yet.</p>
  return (
    <div class="scroll">
      <table data-testid="events">
        <thead>
          <tr>
            <th class="num">Version</th>
            <th>Time</th>
            {showKey ? <th>Key</th> : null}
            <th>Change</th>
            <th>Source</th>
            <th>By</th>
            <th class="num">Onset → mitigation</th>
            <th class="num">Req/s</th>
            <th>Reason</th>
          </tr>
        </thead>
        <tbody>
          {events.map((event) => (
            <tr key={event.version}>
              <td class="num">{event.version}</td>
              <td>{clock(event.at)}</td>
              {showKey ? (
                <td class="key">
                  <a href={keyHref(event.key)}>{event.key}</a>
                </td>
              ) : null}
              <td>
                {event.type}
                {event.type === 'demote' ? '' : ` ${event.mitigation}`}
                {event.type !== 'demote' && event.mitigation === 'split' ? ` x${event.splitFactor}` : ''}
              </td>
              <td>{event.source}</td>
              <td>{event.actor}</td>
              <td class="num">
                {event.onsetToMitigationMs === null ? '–' : duration(event.onsetToMitigationMs)}
              </td>
              <td class="num">{rate(event.requestsPerSecond)}</td>
              <td>{event.reason}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}
