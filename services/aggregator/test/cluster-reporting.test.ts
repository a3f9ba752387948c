import { createNames } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
import { Registry } from 'prom-client'
import { afterEach, describe, expect, it } from 'vitest'
import { registerClusterGauges } from '../src/reporting/cluster-gauges.js'
import { ReporterLease } from '../src/reporting/reporter-lease.js'
import { sampleSum } from './support/prometheus.js'

const redis = useTestRedis()

describe('the report stream gauges', () => {
  it('show entries no replica has read as backlog, and entries read but not acknowledged as pending', async () => {
    const client = redis().client()
    const names = createNames(redis().namespace, { reportShards: 2 })
    const [busy, quiet] = names.reportStreams as [string, string]
    await client.xgroup('CREATE', busy, names.consumerGroup, '0', 'MKSTREAM')
    for (let i = 0; i < 5; i++) await client.xadd(busy, '*', 'm', `report ${i}`)
    // A replica took two entries and died before acknowledging them.
    await client.xreadgroup('GROUP', names.consumerGroup, 'replica-gone', 'COUNT', 2, 'STREAMS', busy, '>')

    const lease = { held: true }
    const registry = new Registry()
    registerClusterGauges(registry, {
      lease,
      registry: { list: async () => [] },
      redis: client,
      reportStreams: names.reportStreams,
      consumerGroup: names.consumerGroup,
    })
    const text = await registry.metrics()
    expect(sampleSum(text, 'heatsink_report_stream_backlog', { stream: busy })).toBe(3)
    expect(sampleSum(text, 'heatsink_report_stream_pending', { stream: busy })).toBe(2)
    // A stream no agent has written to yet (no key, no group) has nothing waiting.
    expect(text).toContain(`heatsink_report_stream_backlog{stream="${quiet}"} 0`)
    expect(text).toContain(`heatsink_report_stream_pending{stream="${quiet}"} 0`)

    lease.held = false
    const followerText = await registry.metrics()
    expect(followerText).toContain('heatsink_metrics_reporter 0')
    expect(followerText).not.toMatch(/^heatsink_report_stream_\w+\{/m)
  })
})

describe('ReporterLease', () => {
  const leases: ReporterLease[] = []
  afterEach(async () => {
    await Promise.all(leases.splice(0).map((lease) => lease.stop()))
  })
  const lease = (replicaId: string, ttlMs = 60_000) => {
    const created = new ReporterLease({
      redis: redis().client(),
      leaseKey: createNames(redis().namespace).metricsReporterLeaseKey,
      replicaId,
      ttlMs,
    })
    leases.push(created)
    return created
  }

  it('is held by one replica at a time, even two with the same replica id, and passes on when its holder stops', async () => {
    const [first, second] = [lease('same-id'), lease('same-id')]
    expect(await first.claim()).toBe(true)
    expect(await second.claim()).toBe(false)
    expect(await first.claim()).toBe(true)
    expect([first.held, second.held]).toEqual([true, false])

    await first.stop()
    expect(first.held).toBe(false)
    expect(await second.claim()).toBe(true)
  })

  it('passes on after its TTL when the holder stops renewing without releasing (a crashed replica)', async () => {
    const [crashed, survivor] = [lease('crashed', 200), lease('survivor', 200)]
    expect(await crashed.claim()).toBe(true)
    expect(await survivor.claim()).toBe(false)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(crashed.held).toBe(false)
    expect(await survivor.claim()).toBe(true)
    expect(await crashed.claim()).toBe(false)
  })
})
