import { describe, expect, it } from 'vitest'
import { runDefaultBenchmark } from '../support/default-benchmark.js'
import { startProxy, usePrivateRedis } from '../support/proxy-fixture.js'

const redis = usePrivateRedis()

// redis-benchmark 7.0's default tests, in the order it runs them.
const DEFAULT_TESTS = [
  'PING_INLINE',
  'PING_MBULK',
  'SET',
  'GET',
  'INCR',
  'LPUSH',
  'RPUSH',
  'LPOP',
  'RPOP',
  'SADD',
  'HSET',
  'SPOP',
  'ZADD',
  'ZPOPMIN',
  'LPUSH (needed to benchmark LRANGE)',
  'LRANGE_100 (first 100 elements)',
  'LRANGE_300 (first 300 elements)',
  'LRANGE_500 (first 500 elements)',
  'LRANGE_600 (first 600 elements)',
  'MSET (10 keys)',
]

describe('redis-benchmark through the proxy', () => {
  it.each([[[]], [['-P', '16']]])('completes every default test with no error (%j)', async (extra) => {
    const { port } = await startProxy(redis().url)
    const rows = await runDefaultBenchmark(port, extra)
    expect(rows.map((row) => row[0])).toEqual(DEFAULT_TESTS)
  })
})
