import { Redis, type RedisOptions } from 'ioredis'

// Each question to a sentinel or a candidate primary is bounded, so one dead node cannot hold a search up.
const TIMEOUT_MS = 500

/** Runs one command on a short-lived connection, bounded by 500 ms; undefined when it fails or times out. */
export async function oneCommand(
  options: RedisOptions,
  command: (client: Redis) => Promise<unknown>,
): Promise<unknown> {
  const client = new Redis({
    ...options,
    lazyConnect: true,
    connectTimeout: TIMEOUT_MS,
    commandTimeout: TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  })
  client.on('error', () => {})
  try {
    await client.connect()
    return await command(client)
  } catch {
    return undefined
  } finally {
    client.disconnect()
  }
}
