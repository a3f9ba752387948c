import type { Mitigation } from '@heatsink/protocol'
import type { Redis as PlainRedis } from 'ioredis'

// Readers of the steady key at once: a burst that a miss without coalescing would send to Redis 16 times.
const READERS = 16
/** How long after each demotion the steady key's reads are watched: a demotion's burst of
 * refills, when one leaked to other keys, came within 0.4 s of it. */
export const WATCH_MS = 400

/** What a client does with a key before its demotion, so that the demotion has work to undo. */
export const USE_BEFORE_DEMOTION: Record<
  Exclude<Mitigation, 'replica_read'>,
  (client: PlainRedis, key: string) => Promise<unknown>
> = {
  // A counter form served over the shards, then a command that folds the key.
  split: async (client, key) => {
    await client.incr(key)
    await client.append(key, '0')
  },
  local_cache: (client, key) => client.get(key),
  coalesce: (client, key) => client.get(key),
}

/** READERS loops calling `read(i)` (i counting up from the reader's number) for WATCH_MS; the reads made. */
export async function readersFor(read: (i: number) => Promise<unknown>): Promise<number> {
  const until = performance.now() + WATCH_MS
  let reads = 0
  await Promise.all(
    Array.from({ length: READERS }, async (_, reader) => {
      for (let i = reader; performance.now() < until; i++) {
        await read(i)
        reads++
        await new Promise((resolve) => setTimeout(resolve, 2))
      }
    }),
  )
  return reads
}
