import type { AddressInfo } from 'node:net'
import { createServer, type Server } from 'node:net'
import { startRedisCluster } from '@heatsink/devservices'
import { Cluster, Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { requireServiceUrl } from '../../../test/support/service-env.js'
import { keepSocketErrorsHandled } from '../src/socket-errors.js'

const clients: Array<Redis | Cluster> = []
const servers: Server[] = []
afterEach(() => {
  for (const client of clients.splice(0)) client.disconnect()
  for (const server of servers.splice(0)) server.close()
})

function track<T extends Redis | Cluster>(client: T): T {
  clients.push(client)
  // ioredis reports socket errors as the client's 'error' events; a client without a listener only logs them.
  client.on('error', () => {})
  return client
}

// A TLS client of a server that answers every connection with plain text: the handshake fails at once.
async function failingTlsClient(): Promise<Redis> {
  const server = createServer((socket) => socket.end('-ERR this is not TLS\r\n'))
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return track(new Redis({ port, tls: {}, retryStrategy: () => null, maxRetriesPerRequest: 0 }))
}

const lateError = () => Object.assign(new Error('a TLS alert after the failed handshake'), { code: 'EPROTO' })

describe('keepSocketErrorsHandled', () => {
  it('keeps a second error on a socket whose TLS handshake failed from escaping the process', async () => {
    const plain = await failingTlsClient()
    const guarded = keepSocketErrorsHandled(await failingTlsClient())
    await Promise.all(
      [plain, guarded].map((client) => new Promise((resolve) => client.once('error', resolve))),
    )
    const socket = (client: Redis) => client.stream as unknown as NodeJS.EventEmitter
    // ioredis alone: its once() listeners are spent, and the second error is thrown.
    expect(() => socket(plain).emit('error', lateError())).toThrow(/TLS alert/)
    expect(() => socket(guarded).emit('error', lateError())).not.toThrow()
  })

  it('covers every socket of a client that connects later, and of its reconnections', async () => {
    const client = keepSocketErrorsHandled(
      track(new Redis(requireServiceUrl('REDIS_URL'), { lazyConnect: true })),
    )
    for (let connection = 0; connection < 2; connection++) {
      await client.connect()
      expect(await client.ping()).toBe('PONG')
      const socket = client.stream as unknown as NodeJS.EventEmitter
      socket.emit('error', lateError())
      expect(() => socket.emit('error', lateError())).not.toThrow()
      const ended = new Promise((resolve) => client.once('end', resolve))
      client.disconnect()
      await ended
    }
  })

  it("covers a Cluster's node connections", async () => {
    const servers = await startRedisCluster({ masters: 3 })
    try {
      const cluster = keepSocketErrorsHandled(track(new Cluster(servers.nodes)))
      expect(await cluster.set('{a}key', 'value')).toBe('OK')
      const nodes = cluster.nodes('all')
      expect(nodes.length).toBeGreaterThanOrEqual(3)
      for (const node of nodes) {
        // A Cluster connects to a node when it first sends it a command.
        expect(await node.ping()).toBe('PONG')
        const socket = node.stream as unknown as NodeJS.EventEmitter
        socket.emit('error', lateError())
        expect(() => socket.emit('error', lateError())).not.toThrow()
      }
    } finally {
      for (const client of clients.splice(0)) client.disconnect()
      await servers.stop()
    }
  }, 60_000)
})
