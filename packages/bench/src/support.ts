import { randomBytes } from 'node:crypto'
import { connect } from 'node:net'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import type { Random } from '@heatsink/workload'
import { Redis } from 'ioredis'

/** The Redis the agent benchmarks use: REDIS_URL, else the local default. */
export function benchRedisUrl(): string {
  return process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
}

/** A namespace of its own per run, so cleanup removes exactly what the run wrote. */
export function benchNamespace(name: string): string {
  return `bench-${name}-${randomBytes(4).toString('hex')}`
}

/** Deletes every key of the namespace. */
export async function removeNamespace(redis: Redis, namespace: string): Promise<void> {
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${namespace}:*`, 'COUNT', 1000)
    if (keys.length > 0) await redis.unlink(...keys)
    cursor = next
  } while (cursor !== '0')
}

/** Polls until `condition` holds, for state that arrives by pub/sub. */
export async function until(condition: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/**
 * Counts the GETs of one key the server runs (MONITOR on a plain socket): exact even when other clients share
 * the server, where INFO commandstats counts every client's GETs. The key must need no escaping.
 * settle() waits until every command sent before it has been seen.
 */
export async function watchGets(url: string, key: string) {
  const { hostname, port } = new URL(url)
  const socket = connect({ host: hostname, port: Number(port || 6379) })
  const marker = new Redis(url)
  const get = `"get" "${key}"`
  let gets = 0
  let tail = ''
  let started = false
  let mark = ''
  let marked = false
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => {
    const lines = (tail + chunk).split('\r\n')
    tail = lines.pop() ?? ''
    for (const line of lines) {
      if (line === '+OK') started = true
      else if (line.toLowerCase().includes(get)) gets++
      else if (mark !== '' && line.includes(mark)) marked = true
    }
  })
  socket.write('MONITOR\r\n')
  await until(() => started, 'MONITOR to start')
  return {
    get gets() {
      return gets
    },
    async settle(): Promise<void> {
      mark = `settle-${randomBytes(4).toString('hex')}`
      marked = false
      await marker.echo(mark)
      await until(() => marked, 'the monitor to catch up')
    },
    stop(): void {
      socket.destroy()
      marker.disconnect()
    },
  }
}

/**
 * A young-generation collection through V8's gc() exposed at run time, for benchmarks that close each batch
 * with one so that each side pays for its own garbage; a no-op where V8 refuses.
 */
export function youngCollector(): () => void {
  try {
    setFlagsFromString('--expose_gc')
    const gc = runInNewContext('gc') as unknown
    if (typeof gc === 'function') return () => gc({ type: 'minor', execution: 'sync' })
  } catch {
    // Fall through: the sides still interleave, only with scavenges landing where they fall.
  }
  return () => {}
}

/** One GET of a key, as each side of a pass-through comparison sends it. */
export type Get = (key: string) => Promise<string | null>

/**
 * Times batches of `size` concurrent GETs over `keys` (stepping by 7, so consecutive batches read different
 * keys); each batch ends with a young-generation collection, so that each side pays for its own garbage
 * rather than for whichever batch a scavenge happened to interrupt. Resolves with the batch's milliseconds.
 */
export function batchTimer(keys: readonly string[], size: number): (get: Get) => Promise<number> {
  const collect = youngCollector()
  const pending = new Array<Promise<string | null>>(size)
  let position = 0
  return async (get) => {
    const start = performance.now()
    for (let i = 0; i < size; i++) {
      pending[i] = get(keys[position] as string)
      position = (position + 7) % keys.length
    }
    await Promise.all(pending)
    collect()
    return performance.now() - start
  }
}

/** Shuffles `items` in place (Fisher-Yates), for the random order of the sides within a round. */
export function shuffle<T>(items: T[], random: Random): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    const item = items[i] as T
    items[i] = items[j] as T
    items[j] = item
  }
}
