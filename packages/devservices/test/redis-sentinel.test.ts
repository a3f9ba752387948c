import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { findExecutable } from '../src/find-executable.js'
import { ServiceUnavailableError, startRedisSentinel } from '../src/index.js'
import { isListening } from '../src/tcp-probe.js'

const hasRedis = findExecutable('redis-server') !== undefined

describe('startRedisSentinel', () => {
  it.skipIf(!hasRedis)(
    'starts a primary, a replica and three sentinels that fail over when the primary crashes',
    async () => {
      const sentinel = await startRedisSentinel({ replicas: 1 })
      const client = new Redis({ sentinels: sentinel.sentinels, name: sentinel.masterName })
      client.on('error', () => {})
      try {
        expect(sentinel.sentinels).toHaveLength(3)
        expect(sentinel.servers).toHaveLength(2)
        const first = await sentinel.primary()
        expect(first.port).toBe(sentinel.servers[0]?.port)
        await client.set('hs-sentinel-key', 'kept')
        expect(await client.wait(1, 1000)).toBe(1)

        await sentinel.servers[0]?.crash()
        // down-after-milliseconds is 1 s; the election and reconfiguration take a few more.
        const deadline = Date.now() + 20_000
        let primary = first
        while (primary.port === first.port && Date.now() < deadline) {
          primary = await sentinel.primary()
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
        expect(primary.port).toBe(sentinel.servers[1]?.port)
        const direct = new Redis(primary.port, '127.0.0.1')
        expect(await direct.get('hs-sentinel-key')).toBe('kept')
        direct.disconnect()
      } finally {
        client.disconnect()
        await sentinel.stop()
      }
      for (const address of [...sentinel.sentinels, ...sentinel.servers]) {
        expect(await isListening(address.host, address.port)).toBe(false)
      }
    },
    40_000,
  )

  it('says how to get Redis when redis-server is missing', async () => {
    const error = await startRedisSentinel({ binDirs: [] }).catch((caught: unknown) => caught)

    expect(error).toBeInstanceOf(ServiceUnavailableError)
    expect(error).toMatchObject({ code: 'E_SERVICE_UNAVAILABLE', service: 'redis-sentinel' })
  })

  it('rejects negative replicas and zero sentinels', async () => {
    await expect(startRedisSentinel({ replicas: -1 })).rejects.toThrow(RangeError)
    await expect(startRedisSentinel({ sentinels: 0 })).rejects.toThrow(RangeError)
  })
})
