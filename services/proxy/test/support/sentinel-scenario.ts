// Longer than 300 lines: one failover scenario (writer, readers, reference clients, the failover and its checks)
// that several Sentinel test files run; split up, its steps would pass the whole scenario's state between files.
import { request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type Aggregator, createAggregator, loadConfig } from '@heatsink/aggregator'
import { type RedisSentinel, startRedisSentinel } from '@heatsink/devservices'
import { useTestPostgres } from '@heatsink/test'
import { Redis } from 'ioredis'
import { afterAll, beforeAll } from 'vitest'
import { createMetricsServer } from '../../src/metrics-server.js'
import { startProxy, waitFor } from './proxy-fixture.js'

/**
 * One failover through the proxy, with plain ioredis Sentinel clients beside it as the reference: a writer stamps
 * a counter (and a local_cache key) with increasing numbers, readers through the proxy and plain ones read both,
 * and the figures a user would care about are measured around the switch `trigger` makes.
 */

/** What a run measured; times in ms. */
export interface FailoverFigures {
  /** From the trigger to the first sentinel's +switch-master. */
  switchMs: number
  /** The oldest read of the counter per reader: how long before the read the first write it missed was acknowledged. */
  maxAgeMs: { proxy: number; plain: number; plainDetector: number; proxyL1: number }
  /** Reads that missed an acknowledged write, per reader (counter key; proxyL1: the local_cache key). */
  staleReads: { proxy: number; plain: number; plainDetector: number; proxyL1: number }
  /** Reads that failed, per reader. */
  readErrors: { proxy: number; plain: number; plainDetector: number; proxyL1: number }
  /** Writes through the proxy that failed, and from +switch-master to the first success after the last failure. */
  proxyWriteErrors: number
  writesResumedMs: number
  /** From +switch-master to the first L1 answer after it. */
  l1BackMs: number
  /** Whether /healthz answered 503 no-primary at some point, and 200 again afterwards. */
  healthzNoPrimary: boolean
  /** A key read hot after the switch: from the first read to local_cache on the proxy. */
  detectionMs: number
  /** A REST promotion after the switch: from the POST to the proxy having it. */
  restPromotionMs: number
}

const HOT_RPS = 50

/** Starts a private Sentinel deployment (primary, one replica, three sentinels) for the file. */
export function useSentinelDeployment(): () => RedisSentinel {
  let deployment: RedisSentinel | undefined
  beforeAll(async () => {
    deployment = await startRedisSentinel({ replicas: 1, sentinels: 3, downAfterMs: 1000 })
  }, 30_000)
  afterAll(async () => {
    await deployment?.stop()
  })
  return () => {
    if (deployment === undefined) throw new Error('the Sentinel deployment is not started yet')
    return deployment
  }
}

/** Runs the scenario: `trigger` starts the failover; `writerFollowsSwitch`: the writer uses failoverDetector. */
export async function runFailover(
  deployment: RedisSentinel,
  postgresUrl: string,
  trigger: () => Promise<void>,
  writerFollowsSwitch: boolean,
): Promise<FailoverFigures> {
  const hosts = deployment.sentinels.map((s) => `${s.host}:${s.port}`).join(',')
  const url = `redis+sentinel://${hosts}/${deployment.masterName}`
  const opened: Array<() => unknown> = []
  const plain = (failoverDetector: boolean) => {
    const client = new Redis({
      sentinels: deployment.sentinels,
      name: deployment.masterName,
      failoverDetector,
      maxRetriesPerRequest: 1,
      // A command queued while ioredis looks for the primary waits no longer than this.
      commandTimeout: 1000,
    })
    client.on('error', () => {})
    opened.push(() => client.disconnect())
    return client
  }
  let aggregator: Aggregator | undefined
  try {
    const running = await startProxy(url, { heatsink: { agentId: 'proxy-sentinel' } })
    const { proxy, namespace } = running
    aggregator = createAggregator(
      loadConfig({
        REDIS_URL: url,
        DATABASE_URL: postgresUrl,
        HEATSINK_NAMESPACE: namespace,
        HEATSINK_HOT_RPS: String(HOT_RPS),
        PORT: '0',
      }),
    )
    await aggregator.start()
    const metrics = createMetricsServer(proxy)
    await new Promise<void>((resolve) => metrics.listen(0, '127.0.0.1', resolve))
    opened.push(() => metrics.close())
    const healthz = async () => httpGet((metrics.address() as AddressInfo).port, '/healthz')

    const counter = `${namespace}:counter`
    const cached = `${namespace}:cached`
    const log = `${namespace}:log`
    // A writer with failoverDetector leaves the demoted primary at once, so its writes are not lost for seconds; but in
    // ioredis 5.11 a +switch-master heard while it is already reconnecting (a crash) ends such a client for good.
    const writer = plain(writerFollowsSwitch)
    await writer.mset(counter, '0', cached, '0')
    await promote(aggregator, cached)
    await waitFor(() => proxy.agent.mitigation(cached) === 'local_cache', 'the local_cache key on the proxy')

    // Sentinel's announcement, as a client that listens for it hears it.
    const announcer = new Redis(deployment.sentinels[0] as { host: string; port: number })
    opened.push(() => announcer.disconnect())
    let switchedAt = 0
    announcer.on('message', () => {
      if (switchedAt === 0) switchedAt = performance.now()
    })
    await announcer.subscribe('+switch-master')

    // The workload: a writer stamps both keys with increasing numbers; each reader records what it got when.
    const acked: number[] = [0]
    let running_ = true
    const writes = (async () => {
      for (let seq = 1; running_; seq++) {
        try {
          // The log keeps the history the surviving primary has: writes missing from it were lost by the failover.
          await writer.multi().mset(counter, String(seq), cached, String(seq)).rpush(log, String(seq)).exec()
          acked[seq] = performance.now()
        } catch {
          seq--
        }
        await pause(3)
      }
    })()
    // Through the proxy, bounded too: an L1 fill in flight when the agent's tracking connection drops can leave its
    // GET unanswered until the fill deadline (l1.fillTimeoutMs) fails it over; such a read counts as an error here.
    const throughProxy = () => {
      const client = new Redis({
        host: '127.0.0.1',
        port: running.port,
        maxRetriesPerRequest: 1,
        commandTimeout: 2000,
      })
      client.on('error', () => {})
      opened.push(() => client.disconnect())
      return client
    }
    const proxyClient = throughProxy()
    const readers = {
      proxy: reader(proxyClient, counter, () => running_),
      plain: reader(plain(false), counter, () => running_),
      plainDetector: reader(plain(true), counter, () => running_),
      proxyL1: reader(throughProxy(), cached, () => running_),
    }
    let proxyWriteErrors = 0
    let lastProxyWriteError = 0
    let firstSuccessAfterError = 0
    const proxyWrites = (async () => {
      const writes_ = running.client()
      while (running_) {
        try {
          await writes_.incr(`${namespace}:proxy-writes`)
          if (lastProxyWriteError > 0 && firstSuccessAfterError < lastProxyWriteError) {
            firstSuccessAfterError = performance.now()
          }
        } catch {
          proxyWriteErrors++
          lastProxyWriteError = performance.now()
        }
        await pause(3)
      }
    })()
    let healthzNoPrimary = false
    const health = (async () => {
      while (running_) {
        const answer = await healthz().catch(() => undefined)
        if (answer?.status === 503 && answer.body.includes('no-primary')) healthzNoPrimary = true
        await pause(20)
      }
    })()

    // A subscribed client through the proxy: its backend connection is closed on the switch, as Sentinel closes a
    // demoted primary's clients, and ioredis reconnects and subscribes again.
    const subscriber = throughProxy()
    const heard: string[] = []
    let subscriberClosed = false
    subscriber.on('message', (_channel, message: string) => heard.push(message))
    subscriber.on('close', () => {
      subscriberClosed = true
    })
    await subscriber.subscribe(`${namespace}:news`)

    await pause(300)
    const first = await deployment.primary()
    const triggeredAt = performance.now()
    await trigger()
    await waitFor(() => switchedAt > 0, '+switch-master', 20_000)
    await waitFor(async () => (await deployment.primary()).port !== first.port, 'the new primary', 5000)
    const servedAtSwitch = proxy.stats.served
    await waitFor(() => proxy.stats.served > servedAtSwitch, 'an L1 answer after the switch', 5000)
    const l1BackMs = performance.now() - switchedAt
    await waitFor(async () => (await healthz()).status === 200, '/healthz 200 after the switch', 5000)
    await waitFor(() => subscriberClosed, 'the subscribed client disconnected by the switch')
    await waitFor(async () => {
      await proxyClient.publish(`${namespace}:news`, 'after the switch').catch(() => 0)
      return heard.includes('after the switch')
    }, 'the subscriber hearing the new primary')
    await pause(500)

    // Detection continues: a key read at 5x the threshold through the proxy is promoted.
    const hot = `${namespace}:hot-after`
    await proxyClient.set(hot, 'v')
    const hotStart = performance.now()
    let hotReads = true
    const hotLoop = (async () => {
      const client = running.client()
      while (hotReads) {
        await Promise.all(Array.from({ length: 5 }, () => client.get(hot).catch(() => null)))
        await pause(10)
      }
    })()
    await waitFor(() => proxy.agent.mitigation(hot) === 'local_cache', `${hot} promoted`, 8000)
    const detectionMs = performance.now() - hotStart
    hotReads = false
    await hotLoop

    // A promotion made through the API after the switch reaches the proxy.
    const restKey = `${namespace}:rest-after`
    const postedAt = performance.now()
    await promote(aggregator, restKey)
    await waitFor(() => proxy.agent.mitigation(restKey) === 'local_cache', `${restKey} on the proxy`, 5000)
    const restPromotionMs = performance.now() - postedAt

    running_ = false
    await Promise.all([writes, proxyWrites, health])
    const results = {
      proxy: await readers.proxy,
      plain: await readers.plain,
      plainDetector: await readers.plainDetector,
      proxyL1: await readers.proxyL1,
    }
    const survived = (await writer.lrange(log, 0, -1)).map(Number)
    const judge = (reads: Read[]) => staleness(reads, acked, survived)
    const judged = {
      proxy: judge(results.proxy.reads),
      plain: judge(results.plain.reads),
      plainDetector: judge(results.plainDetector.reads),
      proxyL1: judge(results.proxyL1.reads),
    }
    const pick = <K extends keyof Judged>(field: K) => ({
      proxy: judged.proxy[field],
      plain: judged.plain[field],
      plainDetector: judged.plainDetector[field],
      proxyL1: judged.proxyL1[field],
    })
    return {
      switchMs: Math.round(switchedAt - triggeredAt),
      maxAgeMs: pick('maxAgeMs'),
      staleReads: pick('stale'),
      readErrors: {
        proxy: results.proxy.errors,
        plain: results.plain.errors,
        plainDetector: results.plainDetector.errors,
        proxyL1: results.proxyL1.errors,
      },
      proxyWriteErrors,
      writesResumedMs: Math.round(proxyWriteErrors === 0 ? 0 : firstSuccessAfterError - switchedAt),
      l1BackMs: Math.round(l1BackMs),
      healthzNoPrimary,
      detectionMs: Math.round(detectionMs),
      restPromotionMs: Math.round(restPromotionMs),
    }
  } finally {
    for (const close of opened) close()
    await aggregator?.stop()
  }
}

interface Read {
  at: number
  value: number
}

interface Judged {
  maxAgeMs: number
  stale: number
}

async function reader(
  client: Redis,
  key: string,
  running: () => boolean,
): Promise<{ reads: Read[]; errors: number }> {
  const reads: Read[] = []
  let errors = 0
  while (running()) {
    const at = performance.now()
    try {
      reads.push({ at, value: Number(await client.get(key)) })
    } catch {
      errors++
    }
    await pause(2)
  }
  return { reads, errors }
}

// A read that began at `at` and got `value` missed the next write after `value` that survived the failover, if that
// write was acknowledged before `at`; its age is how long before. Writes the failover lost (acknowledged by the
// demoted primary after the new one was promoted) are Redis's, not a reader's: they are left out.
function staleness(reads: Read[], acked: number[], survived: number[]): Judged {
  const survivors = new Set(survived)
  const nextSurvivor: number[] = []
  let next: number | undefined
  for (let seq = acked.length; seq >= 0; seq--) {
    nextSurvivor[seq] = next ?? Number.NaN
    if (survivors.has(seq)) next = seq
  }
  let maxAgeMs = 0
  let stale = 0
  for (const { at, value } of reads) {
    const missed = acked[nextSurvivor[value] ?? Number.NaN]
    if (missed !== undefined && missed < at) {
      stale++
      maxAgeMs = Math.max(maxAgeMs, at - missed)
    }
  }
  return { maxAgeMs: Math.round(maxAgeMs), stale }
}

async function promote(aggregator: Aggregator, key: string): Promise<void> {
  const reply = await aggregator.app.inject({
    method: 'POST',
    url: `/hotkeys/${encodeURIComponent(key)}/promote`,
    payload: { mitigation: 'local_cache', ttlSeconds: 120 },
  })
  if (reply.statusCode !== 201) throw new Error(`promote ${key}: ${reply.statusCode} ${reply.body}`)
}

function httpGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path }, (response) => {
      let body = ''
      response.on('data', (chunk) => {
        body += chunk
      })
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }))
    })
    req.on('error', reject)
    req.end()
  })
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

export { useTestPostgres }
