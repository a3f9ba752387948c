import type { BatchObservableResult, Span, Tracer } from '@opentelemetry/api'
import { openTelemetry } from './open-telemetry-api.js'

// SpanStatusCode.ERROR, a constant of the API's (its enum would need the API loaded to be named here).
const SPAN_ERROR = 2

/** The scope the agent's spans and instruments are published under. */
export const INSTRUMENTATION_SCOPE = '@heatsink/agent'

/** What the agent's metrics read at each collection: counters kept anyway for stats(), so no hit pays for them. */
export interface TelemetryReadings {
  l1Hits: number
  l1Misses: number
  l1Entries: number
  l1Bytes: number
  promotions: number
  demotions: number
  loads: number
  loadFailures: number
  reportsSent: number
  reportsDropped: number
}

/**
 * The agent's OpenTelemetry: a span around each getOrLoad load, and observable instruments read from the
 * agent's own counters when the application's metric reader collects (nothing is recorded per request, so
 * the L1 hit path is untouched). No-ops unless the application has registered an SDK (the tracer through the
 * API's proxy, so a later registration works; the meter is taken when the agent is made, so register the SDK
 * before making agents, as OpenTelemetry asks of every instrumented library).
 */
export class AgentTelemetry {
  readonly #tracer: Tracer | undefined
  readonly #attributes: Record<string, string>
  #stopMetrics: () => void = () => {}

  constructor(agentId: string, namespace: string, read: () => TelemetryReadings) {
    const api = openTelemetry
    this.#attributes = { 'heatsink.agent.id': agentId, 'heatsink.namespace': namespace }
    if (api === undefined) {
      this.#tracer = undefined
      return
    }
    this.#tracer = api.trace.getTracer(INSTRUMENTATION_SCOPE)
    const meter = api.metrics.getMeter(INSTRUMENTATION_SCOPE)
    const counter = (name: string, description: string, unit: string) =>
      meter.createObservableCounter(name, { description, unit })
    const hits = counter('heatsink.l1.hits', 'Reads of local_cache keys served from L1', '{read}')
    const misses = counter('heatsink.l1.misses', 'Reads of local_cache keys L1 could not serve', '{read}')
    const promotions = counter('heatsink.registry.promotions', 'Keys the registry gave a mitigation', '{key}')
    const demotions = counter('heatsink.registry.demotions', 'Keys that left the registry', '{key}')
    const loads = counter(
      'heatsink.loads',
      'getOrLoad loader calls (background refreshes included)',
      '{call}',
    )
    const failures = counter('heatsink.load.failures', 'getOrLoad loader calls that threw', '{call}')
    // Reports are counted, not traced: one a second per process would only crowd the application's traces.
    const sent = counter('heatsink.reports.sent', 'Window reports delivered to the report stream', '{report}')
    const dropped = counter(
      'heatsink.reports.dropped',
      'Window reports dropped (busy, disconnected, failed)',
      '{report}',
    )
    const entries = meter.createObservableGauge('heatsink.l1.entries', {
      description: 'Entries in L1 now',
      unit: '{entry}',
    })
    const bytes = meter.createObservableGauge('heatsink.l1.bytes', {
      description: 'Bytes held by L1 now (estimated; bounded by l1.maxBytes)',
      unit: 'By',
    })
    const attributes = this.#attributes
    const observe = (result: BatchObservableResult) => {
      const now = read()
      result.observe(hits, now.l1Hits, attributes)
      result.observe(misses, now.l1Misses, attributes)
      result.observe(promotions, now.promotions, attributes)
      result.observe(demotions, now.demotions, attributes)
      result.observe(loads, now.loads, attributes)
      result.observe(failures, now.loadFailures, attributes)
      result.observe(sent, now.reportsSent, attributes)
      result.observe(dropped, now.reportsDropped, attributes)
      result.observe(entries, now.l1Entries, attributes)
      result.observe(bytes, now.l1Bytes, attributes)
    }
    const instruments = [hits, misses, promotions, demotions, loads, failures, sent, dropped, entries, bytes]
    meter.addBatchObservableCallback(observe, instruments)
    this.#stopMetrics = () => meter.removeBatchObservableCallback(observe, instruments)
  }

  /** Runs `load` in a span `heatsink.load` (the loader's own spans nest under it), marked failed if it throws. */
  traceLoad<T>(key: string, background: boolean, load: () => Promise<T>): Promise<T> {
    const tracer = this.#tracer
    if (tracer === undefined) return load()
    const attributes = { ...this.#attributes, 'heatsink.key': key, 'heatsink.load.background': background }
    return tracer.startActiveSpan('heatsink.load', { attributes }, (span: Span) =>
      load().then(
        (value) => {
          span.end()
          return value
        },
        (error: unknown) => {
          span.recordException(error instanceof Error ? error : String(error))
          span.setStatus({
            code: SPAN_ERROR,
            message: error instanceof Error ? error.message : String(error),
          })
          span.end()
          throw error
        },
      ),
    )
  }

  /** Stops reporting this agent's metrics (on close). */
  close(): void {
    this.#stopMetrics()
    this.#stopMetrics = () => {}
  }
}
