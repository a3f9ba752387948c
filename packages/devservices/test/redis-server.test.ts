import { createServer, type Server } from 'node:net'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { findExecutable } from '../src/find-executable.js'
import {
  DEFAULT_REDIS_URL,
  ensureRedis,
  freePort,
  type RunningService,
  ServiceUnavailableError,
} from '../src/index.js'
import { isListening } from '../src/tcp-probe.js'

const hasRedisServer = findExecutable('redis-server') !== undefined

describe('ensureRedis', () => {
  const services: RunningService[] = []
  afterEach(async () => {
    await Promise.all(services.splice(0).map((service) => service.stop()))
  })

  it.skipIf(!hasRedisServer)(
    'starts a private redis-server when nothing listens on a local port',
    async () => {
      const unusedPort = await freePort()
      const lines: string[] = []
      const service = await ensureRedis({
        url: `redis://127.0.0.1:${unusedPort}`,
        log: (line) => lines.push(line),
      })
      services.push(service)

      expect(service.started).toBe(true)
      const port = Number(new URL(service.url).port)
      expect(port).not.toBe(6379)
      expect(lines.join('\n')).toContain('started a private redis-server')
      const client = new Redis(service.url)
      try {
        expect(await client.ping()).toBe('PONG')
        expect(await client.config('GET', 'save')).toEqual(['save', ''])
      } finally {
        client.disconnect()
      }

      await service.stop()
      expect(await isListening('127.0.0.1', port)).toBe(false)
    },
  )

  it('reuses a server that answers PING and leaves it running on stop()', async () => {
    const url = process.env.REDIS_URL ?? DEFAULT_REDIS_URL
    const service = await ensureRedis({ url })

    expect(service).toMatchObject({ url, started: false })
    await service.stop()
    const client = new Redis(url)
    try {
      expect(await client.ping()).toBe('PONG')
    } finally {
      client.disconnect()
    }
  })

  it('says how to get Redis when nothing listens and redis-server is missing', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`
    const error = await ensureRedis({ url, binDirs: [] }).catch((caught: unknown) => caught)

    expect(error).toBeInstanceOf(ServiceUnavailableError)
    expect(error).toMatchObject({ code: 'E_SERVICE_UNAVAILABLE', service: 'redis', url })
    const { message } = error as ServiceUnavailableError
    expect(message).toContain(url)
    expect(message).toContain('REDIS_URL')
    expect(message).toContain('apt-get install -y --no-install-recommends redis-server')
    expect(message).toContain('brew install redis')
    expect(message).toContain('Docker')
  })

  it('refuses a listener that is not Redis instead of shadowing it', async () => {
    const server: Server = createServer((socket) => socket.destroy())
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    try {
      const error = await ensureRedis({ url: `redis://127.0.0.1:${port}` }).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(ServiceUnavailableError)
      expect((error as Error).message).toContain('did not answer PING')
    } finally {
      server.close()
    }
  })
})
