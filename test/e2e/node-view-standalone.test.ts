import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Aggregator } from '@heatsink/aggregator'
import { type StartedRedisProcess, startRedisProcess } from '@heatsink/devservices'
import type { NodeDetail } from '@heatsink/protocol'
import { pacedReads, testNamespace, useTestPostgres } from '@heatsink/test'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inProcessAggregator } from './support/in-process.js'
import { infoNumber, infoRate, nodeOf, nodesWhen } from './support/node-view.js'

const postgres = useTestPostgres({ scope: 'all' })

const READS_PER_SECOND = 400
const MAXMEMORY = 256 * 1024 * 1024

// A private primary with one replica (so the figures are this test's alone): the node view lists both, and its
// figures are what INFO says on each, within what one sample's timing can move them.
describe('the node view of a standalone Redis with a replica', () => {
  const namespace = testNamespace()
  const dir = mkdtempSync(join(tmpdir(), 'heatsink-node-view-'))
  let primary: StartedRedisProcess
  let replica: StartedRedisProcess
  let aggregator: Aggregator
  let base: string
  let primaryAddress: string
  let replicaAddress: string
  const clients: Redis[] = []
  let stopReads = () => {}

  const client = (port: number) => {
    const made = new Redis(port, '127.0.0.1')
    clients.push(made)
    return made
  }

  beforeAll(async () => {
    const start = (extra: (port: number) => string[]) =>
      startRedisProcess({
        binary: 'redis-server',
        dir,
        service: 'redis',
        timeoutMs: 10_000,
        extraArgs: extra,
      })
    primary = await start(() => ['--maxmemory', String(MAXMEMORY)])
    replica = await start(() => ['--replicaof', '127.0.0.1', String(primary.port)])
    primaryAddress = `127.0.0.1:${primary.port}`
    replicaAddress = `127.0.0.1:${replica.port}`
    const writer = client(primary.port)
    await writer.set('page:home', 'v1')
    aggregator = inProcessAggregator({
      redisUrl: `redis://${primaryAddress}`,
      databaseUrl: postgres().url,
      namespace,
    })
    await aggregator.start()
    base = aggregator.url() as string
    // Steady reads of an existing key: keyspace hits at a known rate.
    const reader = client(primary.port)
    stopReads = pacedReads(READS_PER_SECOND, () => void reader.get('page:home').catch(() => {}))
  }, 60_000)

  afterAll(async () => {
    stopReads()
    await aggregator?.stop()
    for (const made of clients) made.disconnect()
    await replica?.process.stop()
    await primary?.process.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('lists the primary and its replica with the figures INFO gives on each', async () => {
    const view = await nodesWhen(
      base,
      'both nodes with rates',
      (candidate) =>
        candidate.nodes.length === 2 && candidate.nodes.every((node) => node.figures?.opsPerSecond != null),
    )
    expect(view.topology).toBe('standalone')
    expect(view.intervalMs).toBe(1000)
    const onPrimary = nodeOf(view, primaryAddress)
    const onReplica = nodeOf(view, replicaAddress)
    expect(onPrimary).toMatchObject({ role: 'master', master: null, up: true, error: null })
    expect(onReplica).toMatchObject({ role: 'replica', master: primaryAddress, up: true })

    // What INFO says now, read by the test on each node.
    const direct = client(primary.port)
    const figures = onPrimary.figures
    expect(figures?.maxmemoryBytes).toBe(MAXMEMORY)
    expect(nodeOf(view, replicaAddress).figures?.maxmemoryBytes).toBe(0)
    const usedMemory = await infoNumber(direct, 'used_memory')
    expect(Math.abs((figures?.usedMemoryBytes ?? 0) - usedMemory)).toBeLessThan(usedMemory * 0.25)
    // The reader, the writer, the test's own, the aggregator's (several) and the replica's link.
    const connected = await infoNumber(direct, 'connected_clients')
    expect(Math.abs((figures?.connectedClients ?? 0) - connected)).toBeLessThanOrEqual(3)
    expect(figures?.blockedClients).toBeGreaterThanOrEqual(0)
    expect(figures?.evictedKeys).toBe(await infoNumber(direct, 'evicted_keys'))

    // Rates: the test measures the same INFO counters over two seconds; one sample may be a second off.
    const [ops, hits, misses] = await Promise.all([
      infoRate(direct, 'total_commands_processed', 2000),
      infoRate(client(primary.port), 'keyspace_hits', 2000),
      infoRate(client(primary.port), 'keyspace_misses', 2000),
    ])
    const later = nodeOf(
      await nodesWhen(base, 'a new sample', (v) => (v.sampledAt ?? 0) > (view.sampledAt ?? 0)),
      primaryAddress,
    )
    const within = (value: number | null | undefined, expected: number) => {
      expect(value).not.toBeNull()
      expect(Math.abs((value as number) - expected)).toBeLessThan(expected * 0.35 + 30)
    }
    within(later.figures?.opsPerSecond, ops)
    within(later.figures?.keyspaceHitsPerSecond, hits)
    expect(hits).toBeGreaterThan(READS_PER_SECOND * 0.6)
    within(later.figures?.keyspaceMissesPerSecond, misses)
    expect(later.figures?.networkInBytesPerSecond).toBeGreaterThan(0)
    expect(later.figures?.networkOutBytesPerSecond).toBeGreaterThan(0)
    // Serving 400 reads a second takes a small part of a core, never more than one (Redis runs one main thread).
    expect(later.figures?.cpuRatio).toBeGreaterThan(0)
    expect(later.figures?.cpuRatio).toBeLessThan(1.2)
    const get = later.figures?.latency.find((command) => command.command === 'get')
    expect(get?.calls).toBeGreaterThan(0)
    expect(get?.p99Usec).toBeGreaterThan(0)

    // The replica acknowledges every second, so its lag is a second or two, and it is behind by few bytes.
    const replicaFigures = nodeOf(
      await nodesWhen(base, 'the latest sample', () => true),
      replicaAddress,
    ).figures
    expect(replicaFigures?.replicationLagSeconds).toBeGreaterThanOrEqual(0)
    expect(replicaFigures?.replicationLagSeconds).toBeLessThanOrEqual(3)
    expect(replicaFigures?.replicationBehindBytes).toBeGreaterThanOrEqual(0)
    expect(later.figures?.replicationLagSeconds).toBeNull()
    expect(view.imbalance).toBeCloseTo(1, 5)
  }, 60_000)

  it("serves one node's page with its recent history, 404 for an unknown node and 400 for a malformed one", async () => {
    const response = await fetch(`${base}/nodes/${encodeURIComponent(primaryAddress)}`)
    expect(response.status).toBe(200)
    const detail = (await response.json()) as NodeDetail
    expect(detail.node).toBe(primaryAddress)
    expect(detail.history.length).toBeGreaterThanOrEqual(2)
    const times = detail.history.map((point) => point.at)
    expect([...times].sort((a, b) => a - b)).toEqual(times)

    const unknown = await fetch(`${base}/nodes/${encodeURIComponent('127.0.0.1:1')}`)
    expect(unknown.status).toBe(404)
    const body = (await unknown.json()) as { message: string; code: string }
    expect(body.code).toBe('E_UNKNOWN_NODE')
    expect(body.message).toContain('"127.0.0.1:1" is unknown')
    expect(body.message).toContain(primaryAddress)

    // An IPv6 node is host:port too (the port after the last colon): unknown here, not malformed.
    expect((await fetch(`${base}/nodes/${encodeURIComponent('::1:6379')}`)).status).toBe(404)

    const malformed = await fetch(`${base}/nodes/not-a-node`)
    expect(malformed.status).toBe(400)
    expect(((await malformed.json()) as { message: string }).message).toContain(
      'params/node must be host:port',
    )
  }, 20_000)

  it('exports the per-node gauges and the imbalance on /metrics', async () => {
    const metrics = await (await fetch(`${base}/metrics`)).text()
    for (const name of [
      'heatsink_node_ops_per_second',
      'heatsink_node_cpu_ratio',
      'heatsink_node_used_memory_bytes',
      'heatsink_node_connected_clients',
    ]) {
      expect(metrics).toMatch(new RegExp(`^${name}\\{node="${primaryAddress}"\\} [0-9.e+-]+$`, 'm'))
    }
    expect(metrics).toMatch(new RegExp(`^heatsink_node_up\\{node="${replicaAddress}"\\} 1$`, 'm'))
    expect(metrics).toMatch(
      new RegExp(`^heatsink_node_replication_lag_seconds\\{node="${replicaAddress}"\\} \\d+$`, 'm'),
    )
    expect(metrics).not.toMatch(
      new RegExp(`^heatsink_node_replication_lag_seconds\\{node="${primaryAddress}"`, 'm'),
    )
    expect(metrics).toMatch(/^heatsink_node_imbalance 1$/m)
  }, 20_000)

  it('shows a replica that stopped as down (its primary no longer lists it), with heatsink_node_up 0', async () => {
    await replica.process.stop()
    const view = await nodesWhen(
      base,
      'the replica down',
      (candidate) => nodeOf(candidate, replicaAddress).up === false,
    )
    expect(nodeOf(view, replicaAddress)).toMatchObject({
      role: 'replica',
      up: false,
      error: expect.any(String),
    })
    // The last figures it gave stay, for its page.
    expect(nodeOf(view, replicaAddress).figures?.maxmemoryBytes).toBe(0)
    expect(nodeOf(view, primaryAddress).up).toBe(true)
    const metrics = await (await fetch(`${base}/metrics`)).text()
    expect(metrics).toMatch(new RegExp(`^heatsink_node_up\\{node="${replicaAddress}"\\} 0$`, 'm'))
  }, 30_000)
})
