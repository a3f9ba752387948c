import type { ContextLoader } from '@heatsink/stampede'
import type { AgentEvents } from '../events/agent-events.js'
import type { AgentCounters } from '../events/stats.js'
import type { AgentTelemetry } from '../telemetry/agent-telemetry.js'

/**
 * `loader` reporting each of its calls: a span around it (OpenTelemetry), and when it throws, the loadFailed
 * event and the loadFailures counter. Wraps the loader only where a load may happen (past L1), never on a hit.
 */
export function observedLoader<T>(
  key: string,
  loader: ContextLoader<T>,
  telemetry: AgentTelemetry,
  events: AgentEvents,
  counters: AgentCounters,
): ContextLoader<T> {
  return (context) =>
    telemetry.traceLoad(key, context.background, async () => {
      try {
        return await loader(context)
      } catch (error) {
        counters.loadFailures++
        events.loadFailed(key, error, context.background)
        throw error
      }
    })
}
