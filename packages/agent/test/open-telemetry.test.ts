import { createNames } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
import { metrics, SpanStatusCode, trace } from '@opentelemetry/api'
import { type DataPoint, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { publishRegistry } from '../src/testing.js'
import { useAgents, waitFor } from './support/helpers.js'

const redis = useTestRedis()
const newAgent = useAgents(redis)

/** A reader the test collects from when it chooses. */
class CollectingReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

const spans = new InMemorySpanExporter()
const reader = new CollectingReader()
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] })
const meterProvider = new MeterProvider({ readers: [reader] })

// As an application would: the SDK is registered before any agent is made.
beforeAll(() => {
  trace.setGlobalTracerProvider(tracerProvider)
  metrics.setGlobalMeterProvider(meterProvider)
})

afterAll(async () => {
  trace.disable()
  metrics.disable()
  await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()])
})

/** The agent's value of metric `name` at the last collection. */
async function metricValue(name: string, agentId: string): Promise<number | undefined> {
  const { resourceMetrics } = await reader.collect()
  for (const scope of resourceMetrics.scopeMetrics) {
    if (scope.scope.name !== '@heatsink/agent') continue
    for (const metric of scope.metrics) {
      if (metric.descriptor.name !== name) continue
      const points = metric.dataPoints as DataPoint<number>[]
      return points.find((point) => point.attributes['heatsink.agent.id'] === agentId)?.value
    }
  }
  return undefined
}

describe('OpenTelemetry, with the SDK registered', () => {
  it('puts a span around each getOrLoad load, marked failed when the loader throws', async () => {
    const agent = newAgent({ agentId: 'otel-spans' })
    await agent.ready()
    const key = `${redis().namespace}:otel:product`
    expect(await agent.getOrLoad(key, () => ({ id: 1 }), { ttlSeconds: 60 })).toEqual({ id: 1 })
    // A hit in Redis loads nothing, so it makes no span.
    expect(await agent.getOrLoad(key, () => ({ id: 2 }), { ttlSeconds: 60 })).toEqual({ id: 1 })
    const failure = new Error('database down')
    const failing = () => {
      throw failure
    }
    await expect(agent.getOrLoad(`${key}:missing`, failing, { ttlSeconds: 60 })).rejects.toBe(failure)

    const loads = spans.getFinishedSpans().filter((span) => span.name === 'heatsink.load')
    expect(loads.map((span) => span.attributes)).toEqual([
      {
        'heatsink.agent.id': 'otel-spans',
        'heatsink.namespace': redis().namespace,
        'heatsink.key': key,
        'heatsink.load.background': false,
      },
      {
        'heatsink.agent.id': 'otel-spans',
        'heatsink.namespace': redis().namespace,
        'heatsink.key': `${key}:missing`,
        'heatsink.load.background': false,
      },
    ])
    expect(loads[0]?.status.code).toBe(SpanStatusCode.UNSET)
    expect(loads[1]?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'database down' })
    expect(loads[1]?.events.map((event) => event.name)).toEqual(['exception'])
  })

  it('reports L1 hits and misses, promotions, loads, load failures and reports through the meter', async () => {
    const agent = newAgent({ agentId: 'otel-metrics', l1: { maxTtlMs: 60_000 } })
    await agent.ready()
    const key = `${redis().namespace}:otel:hot`
    await redis().client().set(key, 'v')
    await publishRegistry(redis().client(), createNames(redis().namespace), { key })
    await waitFor(() => agent.stats().l1Entries === 1, 'the promoted key in L1')
    for (let i = 0; i < 25; i++) expect(await agent.get(key)).toBe('v')
    await agent.getOrLoad(`${key}:loaded`, () => 'x', { ttlSeconds: 60 })
    await agent
      .getOrLoad(`${key}:failed`, () => Promise.reject(new Error('no')), { ttlSeconds: 60 })
      .catch(() => {})

    const stats = agent.stats()
    expect(stats.l1Hits).toBeGreaterThanOrEqual(25)
    expect(await metricValue('heatsink.l1.hits', 'otel-metrics')).toBe(stats.l1Hits)
    expect(await metricValue('heatsink.l1.misses', 'otel-metrics')).toBe(stats.l1Misses)
    expect(await metricValue('heatsink.l1.entries', 'otel-metrics')).toBe(1)
    expect(await metricValue('heatsink.l1.bytes', 'otel-metrics')).toBe(stats.l1Bytes)
    expect(stats.l1Bytes).toBeGreaterThan(0)
    expect(await metricValue('heatsink.registry.promotions', 'otel-metrics')).toBe(1)
    expect(await metricValue('heatsink.registry.demotions', 'otel-metrics')).toBe(0)
    expect(await metricValue('heatsink.loads', 'otel-metrics')).toBe(2)
    expect(await metricValue('heatsink.load.failures', 'otel-metrics')).toBe(1)
    // A window may close during the collection: its report counts are bracketed by stats() before and after.
    await waitFor(() => agent.stats().reportsSent > 0, 'a report sent')
    const before = agent.stats().reportsSent
    const sent = (await metricValue('heatsink.reports.sent', 'otel-metrics')) as number
    expect(sent).toBeGreaterThanOrEqual(before)
    expect(sent).toBeLessThanOrEqual(agent.stats().reportsSent)
    expect(await metricValue('heatsink.reports.dropped', 'otel-metrics')).toBe(agent.stats().reportsDropped)
  })
})
