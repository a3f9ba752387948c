import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { publishRegistry } from '@heatsink/agent/testing'
import { createNames } from '@heatsink/protocol'
import { testNamespace } from '@heatsink/test'
import { Redis } from 'ioredis'
import { afterEach } from 'vitest'
import { createProxy, type ProxyOptions, type RespProxy } from '../../src/index.js'

/** A private redis-server for this file (tests flush, pause and count commands on it), stopped after the file. */
export { usePrivateRedis } from '@heatsink/test'

/** A running proxy and how to reach it. */
export interface RunningProxy {
  proxy: RespProxy
  port: number
  namespace: string
  /** A new ioredis client through the proxy, closed after the test. */
  client(): Redis
  /** A raw socket to the proxy, closed after the test. */
  socket(): Promise<Socket>
}

const opened: Array<{ close(): unknown }> = []

/** Starts a proxy in front of `backend` with a namespace of its own; it and its clients close after the test. */
export async function startProxy(
  backend: string,
  options: Partial<ProxyOptions> = {},
): Promise<RunningProxy> {
  const namespace = options.heatsink?.namespace ?? testNamespace()
  const { proxy, port } = await createProxy({
    backend,
    port: 0,
    ...options,
    heatsink: { namespace, ...options.heatsink },
  })
  opened.push({ close: () => proxy.close(1000) })
  await proxy.agent.ready()
  return {
    proxy,
    port,
    namespace,
    client() {
      const client = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 })
      client.on('error', () => {})
      opened.push({ close: () => client.disconnect() })
      return client
    },
    async socket() {
      const socket = connect({ port, host: '127.0.0.1' })
      socket.on('error', () => {})
      opened.push({ close: () => socket.destroy() })
      await once(socket, 'connect')
      return socket
    },
  }
}

/** Registers `key` local_cache in the proxies' namespace and waits until every one of them has it so. */
export async function promoteOnEvery(redis: Redis, key: string, proxies: RunningProxy[]): Promise<void> {
  await publishRegistry(redis, createNames(proxies[0]?.namespace ?? ''), { key })
  await waitFor(
    () => proxies.every(({ proxy }) => proxy.agent.mitigation(key) === 'local_cache'),
    'the promotion on every proxy',
  )
}

afterEach(async () => {
  // Clients before proxies: a proxy's close waits for its clients.
  for (const item of opened.splice(0).reverse()) await item.close()
})

/** Everything the socket receives until `done(received)` says it is complete (or the socket closes). */
export function readUntil(
  socket: Socket,
  done: (received: Buffer) => boolean,
  timeoutMs = 5000,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0)
    const timer = setTimeout(() => {
      cleanup()
      reject(new Error(`timed out; received ${JSON.stringify(received.toString('latin1').slice(0, 500))}`))
    }, timeoutMs)
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk])
      if (done(received)) {
        cleanup()
        resolve(received)
      }
    }
    const onClose = () => {
      cleanup()
      resolve(received)
    }
    const cleanup = () => {
      clearTimeout(timer)
      socket.off('data', onData)
      socket.off('close', onClose)
    }
    socket.on('data', onData)
    socket.on('close', onClose)
  })
}

/** Waits until the socket has received `expected` exactly (as text), and returns what it got. */
export async function expectReply(socket: Socket, expected: string): Promise<string> {
  const received = await readUntil(socket, (bytes) => bytes.length >= Buffer.byteLength(expected, 'latin1'))
  return received.toString('latin1')
}

/** The number of calls of `command` the server ran, from INFO commandstats. */
export async function commandCalls(redis: Redis, command: string): Promise<number> {
  const info = await redis.info('commandstats')
  const match = new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info)
  return match === null ? 0 : Number(match[1])
}

/** Polls `condition` until it holds; for effects no test can await directly (a disconnect, a pub/sub delivery). */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 5000,
): Promise<void> {
  const start = performance.now()
  while (!(await condition())) {
    if (performance.now() - start > timeoutMs)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** Every key a full SCAN walk returns, `count` per call, in the order received. */
export async function scanAll(client: Redis, count: number): Promise<string[]> {
  const scanned: string[] = []
  let cursor = '0'
  do {
    const [next, keys] = await client.scan(cursor, 'COUNT', count)
    scanned.push(...keys)
    cursor = next
  } while (cursor !== '0')
  return scanned
}
