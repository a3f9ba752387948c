import { fileURLToPath } from 'node:url'
import { type Aggregator, createAggregator, loadConfig } from '@heatsink/aggregator'
import { useTestPostgres } from '@heatsink/test'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { ensureRedisPy } from '../support/debian-package.js'
import { commandCalls, startProxy, usePrivateRedis, waitFor } from '../support/proxy-fixture.js'
import { runProgram } from '../support/run-program.js'

const redis = usePrivateRedis()
const postgres = useTestPostgres({ scope: 'all' })
const READER = fileURLToPath(new URL('./hot_key_reader.py', import.meta.url))
const RATE_PER_PROXY = 2500

interface ReaderResult {
  reads: number
  wrong: number
  seconds: number
}

async function readThrough(port: number, key: string, seconds: number): Promise<ReaderResult> {
  const { stdout, stderr, code } = await runProgram(ensureRedisPy(), [
    READER,
    String(port),
    key,
    String(RATE_PER_PROXY),
    String(seconds),
    'value',
  ])
  expect(stderr).toBe('')
  expect(code).toBe(0)
  return JSON.parse(stdout) as ReaderResult
}

describe('a hot key read by a plain redis-py client through two proxies', () => {
  let aggregator: Aggregator | undefined
  afterAll(async () => {
    await aggregator?.stop()
  })

  it('is detected, and then at least 99.9% of its reads never reach Redis (counted at the server)', async () => {
    const a = await startProxy(redis().url, { heatsink: { agentId: 'proxy-a' } })
    const namespace = a.namespace
    const b = await startProxy(redis().url, { heatsink: { namespace, agentId: 'proxy-b' } })
    aggregator = createAggregator(
      loadConfig({
        REDIS_URL: redis().url,
        DATABASE_URL: postgres().url,
        HEATSINK_NAMESPACE: namespace,
        HEATSINK_HOT_RPS: '1000',
        PORT: '0',
      }),
    )
    await aggregator.start()
    const direct = new Redis(redis().url)
    const key = `${namespace}:trending`
    await direct.set(key, 'value')

    // 5,000 reads a second in all, half through each proxy, until both proxies serve the key from L1.
    const warmups = [readThrough(a.port, key, 8), readThrough(b.port, key, 8)]
    await waitFor(
      () =>
        a.proxy.agent.mitigation(key) === 'local_cache' && b.proxy.agent.mitigation(key) === 'local_cache',
      'the key to be promoted to local_cache on both proxies',
      8000,
    )
    await Promise.all(warmups)

    const getsBefore = await commandCalls(direct, 'get')
    const measured = await Promise.all([readThrough(a.port, key, 5), readThrough(b.port, key, 5)])
    const getsAtRedis = (await commandCalls(direct, 'get')) - getsBefore
    const reads = measured.reduce((sum, result) => sum + result.reads, 0)
    const share = 1 - getsAtRedis / reads
    console.log(
      `hot key through two proxies: ${reads} reads by redis-py in ${measured[0]?.seconds.toFixed(1)} s, ${getsAtRedis} GETs reached Redis (L1 fills included): ${(share * 100).toFixed(3)}% answered by the proxies`,
    )
    expect(measured.every((result) => result.wrong === 0)).toBe(true)
    expect(reads).toBeGreaterThan(20_000)
    expect(share).toBeGreaterThanOrEqual(0.999)
    direct.disconnect()
  }, 60_000)
})
