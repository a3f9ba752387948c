import { describe, expect, it } from 'vitest'
import { ensureDebianPackage } from '../support/debian-package.js'
import { startProxy, usePrivateRedis } from '../support/proxy-fixture.js'
import { runProgram } from '../support/run-program.js'

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
    const benchmark = ensureDebianPackage('/usr/bin/redis-benchmark', 'redis-tools')
    const { port } = await startProxy(redis().url)
    const { stdout, stderr, code } = await runProgram(benchmark, [
      '-p',
      String(port),
      '-n',
      '2000',
      '-c',
      '20',
      '--csv',
      ...extra,
    ])
    expect(stderr).not.toMatch(/error/i)
    expect(code).toBe(0)
    const rows = stdout
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.split('","').map((cell) => cell.replaceAll('"', '')))
    expect(rows.map((row) => row[0])).toEqual(DEFAULT_TESTS)
    for (const row of rows) expect(Number(row[1])).toBeGreaterThan(0)
  })
})
