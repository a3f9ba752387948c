import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'

// Each quickstart run works in a namespace of its own: two runs on one Redis would otherwise sum each other's
// reports (doubled rates) and see each other's registry events (latencies measured from the wrong start).

/** How a run's generated namespace begins; 8 hex characters follow. */
export const RUN_NAMESPACE_PREFIX = 'heatsink-quickstart-'
const GENERATED = /^(heatsink-quickstart-[0-9a-f]{8}):/
// A live run renews its marker every second; one that was killed lets it lapse within this.
const MARKER_TTL_MS = 5000

/** HEATSINK_NAMESPACE when set, else a fresh namespace for this run. */
export function runNamespace(env: NodeJS.ProcessEnv): string {
  const given = env.HEATSINK_NAMESPACE?.trim()
  return given ? given : `${RUN_NAMESPACE_PREFIX}${randomBytes(4).toString('hex')}`
}

const markerKey = (namespace: string) => `${namespace}:quickstart-alive`

/**
 * Marks `namespace` as in use for as long as the run lasts, so that other runs can tell its keys from those an
 * interrupted run left behind. Set before the run writes any other key; stop() removes it.
 */
export async function markRunning(redis: Redis, namespace: string): Promise<{ stop(): Promise<void> }> {
  const renew = () => redis.set(markerKey(namespace), String(process.pid), 'PX', MARKER_TTL_MS)
  await renew()
  const timer = setInterval(() => void renew().catch(() => {}), 1000)
  timer.unref()
  return {
    stop: async () => {
      clearInterval(timer)
      await redis.del(markerKey(namespace))
    },
  }
}

/** Whether a run other than the one in `namespace` is live on this Redis. */
export async function otherRunsLive(redis: Redis, namespace: string): Promise<boolean> {
  let other = false
  await eachKeys(redis, '*:quickstart-alive', (keys) => {
    other ||= keys.some((key) => key !== markerKey(namespace))
  })
  return other
}

/** Removes the keys of generated namespaces whose run is gone (killed before it could clean up); returns them. */
export async function removeAbandonedRuns(redis: Redis): Promise<string[]> {
  const found = new Set<string>()
  await eachKeys(redis, `${RUN_NAMESPACE_PREFIX}*`, (keys) => {
    for (const key of keys) {
      const namespace = GENERATED.exec(key)?.[1]
      if (namespace !== undefined) found.add(namespace)
    }
  })
  const abandoned: string[] = []
  for (const namespace of found) {
    if ((await redis.exists(markerKey(namespace))) === 0) abandoned.push(namespace)
  }
  for (const namespace of abandoned) await removeKeys(redis, `${namespace}:*`)
  return abandoned
}

/** Unlinks every key matching `pattern`. */
export async function removeKeys(redis: Redis, pattern: string): Promise<void> {
  await eachKeys(redis, pattern, async (keys) => {
    if (keys.length > 0) await redis.unlink(...keys)
  })
}

async function eachKeys(
  redis: Redis,
  pattern: string,
  visit: (keys: string[]) => void | Promise<void>,
): Promise<void> {
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
    await visit(keys)
    cursor = next
  } while (cursor !== '0')
}
