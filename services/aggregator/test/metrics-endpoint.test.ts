import { useTestPostgres, useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
import { type Aggregator, createAggregator } from '../src/aggregator.js'
import { testConfig, until } from './support/fixtures.js'
import { sampleSum } from './support/prometheus.js'
import { makeReport, sendReport } from './support/reports.js'

const redis = useTestRedis()
const postgres = useTestPostgres()

const running: Aggregator[] = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((aggregator) => aggregator.stop()))
})

// A short lease, so a takeover is seen within a second instead of the default 15 s.
const LEASE_MS = 600

async function replica(replicaId: string): Promise<Aggregator> {
  const aggregator = createAggregator(
    testConfig({
      DATABASE_URL: postgres().url,
      HEATSINK_NAMESPACE: redis().namespace,
      HEATSINK_REPLICA_ID: replicaId,
    }),
    { metricsReporterLeaseMs: LEASE_MS },
  )
  running.push(aggregator)
  await aggregator.start()
  return aggregator
}

/** GET /metrics over HTTP, as Prometheus scrapes it. */
async function scrape(aggregator: Aggregator): Promise<string> {
  const response = await fetch(`${aggregator.url()}/metrics`)
  expect(response.status).toBe(200)
  return response.text()
}

const promote = (aggregator: Aggregator, key: string, body: object) =>
  fetch(`${aggregator.url()}/hotkeys/${encodeURIComponent(key)}/promote`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

describe('GET /metrics', () => {
  it('says which release and Node.js run, and starts every labelled counter at 0', async () => {
    const aggregator = await replica('one')
    const text = await scrape(aggregator)

    expect(text).toContain(`heatsink_build_info{version="0.1.0",node_version="${process.version}"} 1`)
    for (const reason of [
      'E_MALFORMED_MESSAGE',
      'E_WIRE_VERSION',
      'E_MISSING_FIELD',
      'E_WINDOW_MISMATCH',
      'E_FROM_THE_FUTURE',
    ]) {
      expect(text).toContain(`heatsink_dead_letter_total{reason="${reason}"} 0`)
    }
    for (const type of ['promote', 'update', 'demote']) {
      expect(text).toContain(`heatsink_registry_events_published_total{type="${type}"} 0`)
    }
    expect(aggregator.names.reportStreams.length).toBeGreaterThan(0)
    for (const stream of aggregator.names.reportStreams) {
      expect(text).toContain(`heatsink_ingest_group_recreated_total{stream="${stream}"} 0`)
    }
    expect(text).toMatch(/^heatsink_miss_storms_total 0$/m)
  })

  it('counts the agents reporting and those gone stale, for the alert on agents whose reports stopped', async () => {
    const aggregator = await replica('one')
    const window = Math.floor(Date.now() / 1000) * 1000
    const client = redis().client()
    // One agent that reports once and falls silent (stale after three windows), then one that reports now.
    await sendReport(client, aggregator.names, makeReport('gone', window - 1000, {}))
    await until(
      'the silent agent stale',
      async () => (await aggregator.detection.agents.list()).some((agent) => agent.stale),
      10_000,
    )
    await sendReport(client, aggregator.names, makeReport('live', window, {}))
    await until('both agents listed', async () => (await aggregator.detection.agents.list()).length === 2)
    const text = await scrape(aggregator)
    expect(sampleSum(text, 'heatsink_agents', { state: 'reporting' })).toBe(1)
    expect(sampleSum(text, 'heatsink_agents', { state: 'stale' })).toBe(1)
  })

  it('times API requests by route pattern and status code, never by raw URL', async () => {
    const aggregator = await replica('one')
    expect((await fetch(`${aggregator.url()}/hotkeys/user%2F42/stats`)).status).toBe(404)
    expect((await fetch(`${aggregator.url()}/hotkeys/user%2F43/stats`)).status).toBe(404)
    expect((await promote(aggregator, 'user/44', { mitigation: 'bogus' })).status).toBe(400)
    expect((await fetch(`${aggregator.url()}/wp-login.php`)).status).toBe(404)
    const text = await scrape(aggregator)

    const count = (labels: Record<string, string>) =>
      sampleSum(text, 'heatsink_http_request_duration_seconds_count', labels)
    expect(count({ method: 'GET', route: '/hotkeys/:key/stats', status_code: '404' })).toBe(2)
    expect(count({ method: 'POST', route: '/hotkeys/:key/promote', status_code: '400' })).toBe(1)
    expect(count({ method: 'GET', route: 'unmatched', status_code: '404' })).toBe(1)
    expect(
      sampleSum(text, 'heatsink_http_request_duration_seconds_bucket', {
        route: '/hotkeys/:key/stats',
        le: '+Inf',
      }),
    ).toBe(2)
    expect(text).not.toMatch(/user%2F4|user\/4|wp-login/)
  })

  it("exports the registry's hot keys and the report streams' backlog from one replica only, and hands over when it stops", async () => {
    const [one, two] = [await replica('one'), await replica('two')]
    expect((await promote(one, 'product:1', { mitigation: 'local_cache' })).status).toBe(201)
    expect((await promote(one, 'feed:home', { mitigation: 'split', splitFactor: 4 })).status).toBe(201)

    const summed = async (name: string, labels: Record<string, string> = {}) =>
      sampleSum(await scrape(one), name, labels) + sampleSum(await scrape(two), name, labels)
    expect(await summed('heatsink_metrics_reporter')).toBe(1)
    expect(await summed('heatsink_hot_keys', { mitigation: 'local_cache' })).toBe(1)
    expect(await summed('heatsink_hot_keys', { mitigation: 'split' })).toBe(1)
    expect(await summed('heatsink_hot_keys', { mitigation: 'coalesce' })).toBe(0)

    const [reporter, follower] =
      sampleSum(await scrape(one), 'heatsink_metrics_reporter') === 1 ? [one, two] : [two, one]
    const reported = await scrape(reporter)
    expect(reported).toContain('heatsink_hot_keys{mitigation="coalesce"} 0')
    for (const stream of reporter.names.reportStreams) {
      // Both replicas read every stream, so nothing waits and nothing is left unacknowledged.
      expect(reported).toContain(`heatsink_report_stream_backlog{stream="${stream}"} 0`)
      expect(reported).toContain(`heatsink_report_stream_pending{stream="${stream}"} 0`)
    }
    const followed = await scrape(follower)
    expect(followed).toContain('heatsink_metrics_reporter 0')
    expect(followed).not.toMatch(/^heatsink_(hot_keys|report_stream_backlog|report_stream_pending)\{/m)

    await reporter.stop()
    await until(
      'the other replica reporting',
      async () => sampleSum(await scrape(follower), 'heatsink_metrics_reporter') === 1,
    )
    expect(sampleSum(await scrape(follower), 'heatsink_hot_keys')).toBe(2)
  })
})
