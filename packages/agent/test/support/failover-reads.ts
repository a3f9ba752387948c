import { commandCalls } from '../../src/testing.js'
import { waitFor } from './helpers.js'
import type { SurvivingWriter } from './surviving-writer.js'

/** A server as ioredis takes it. */
export interface Node {
  host: string
  port: number
}

interface Read {
  issuedAt: number
  value: string | null
}

type Get = () => Promise<string | null>

/**
 * Readers of a failover test until stopped: four loops through Heatsink (`ours`) and one plain client beside them,
 * each read kept with when it was issued, each failure counted.
 */
export function startFailoverReads(ours: Get, plain: Get) {
  let running = true
  const reads = { ours: [] as Read[], plain: [] as Read[] }
  const errors = { ours: 0, plain: 0 }
  const loop = async (get: Get, into: Read[], failed: () => void) => {
    while (running) {
      const issuedAt = Date.now()
      await get().then((value) => into.push({ issuedAt, value }), failed)
      await new Promise((resolve) => setTimeout(resolve, 1))
    }
  }
  const loops = [
    ...Array.from({ length: 4 }, () => loop(ours, reads.ours, () => errors.ours++)),
    loop(plain, reads.plain, () => errors.plain++),
  ]
  return {
    /** Stops the readers and the writer; the oldest read of each (surviving writes only) and the errors. */
    async stop(writer: SurvivingWriter) {
      running = false
      await Promise.all(loops)
      await writer.stop()
      const oldest = (of: Read[]) =>
        of.reduce((max, read) => Math.max(max, writer.ageOf(read.value, read.issuedAt)), 0)
      return {
        reads: reads.ours.length,
        errors: errors.ours,
        plainErrors: errors.plain,
        writerErrors: writer.errors,
        maxAgeMs: oldest(reads.ours),
        plainMaxAgeMs: oldest(reads.plain),
      }
    },
  }
}

/** The GETs each server answered while `client` read `key` 200 times (heartbeat polls included). */
export async function getsOn(
  client: { get(key: string): Promise<string | null> },
  key: string,
  nodes: Node[],
): Promise<number[]> {
  const before = await Promise.all(nodes.map((node) => commandCalls(node, 'get')))
  for (let i = 0; i < 200; i++) await client.get(key)
  const after = await Promise.all(nodes.map((node) => commandCalls(node, 'get')))
  return after.map((calls, i) => calls - (before[i] as number))
}

/**
 * Waits until, three times in a row 0.5 s apart, the first of `nodes()` (the primary) serves at most 40% of the
 * key's reads and every other at least 25%: a replica still showing a demoted primary's last heartbeats takes reads
 * for up to maxReplicaLagMs, then none while it resyncs with the new primary.
 */
export async function spreadHolds(
  client: { get(key: string): Promise<string | null> },
  key: string,
  nodes: () => Promise<Node[]>,
  what: string,
): Promise<void> {
  let held = 0
  await waitFor(
    async () => {
      const [onPrimary = 0, ...onReplicas] = await getsOn(client, key, await nodes())
      const total = onPrimary + onReplicas.reduce((sum, n) => sum + n, 0)
      held = onPrimary <= total * 0.4 && onReplicas.every((n) => n >= total * 0.25) ? held + 1 : 0
      if (held < 3) await new Promise((resolve) => setTimeout(resolve, 500))
      return held === 3
    },
    what,
    30_000,
  )
}
