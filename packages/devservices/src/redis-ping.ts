import { Redis } from 'ioredis'

/** Resolves once the Redis at `url` answers PING; rejects with the connection or command error otherwise. */
export async function pingRedis(url: string, timeoutMs = 2_000): Promise<void> {
  // No retries and no offline queue: a probe must fail fast instead of waiting for a server that is not there.
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  })
  client.on('error', () => {})
  try {
    await client.connect()
    const reply = await client.ping()
    if (reply !== 'PONG') throw new Error(`PING answered ${JSON.stringify(reply)}`)
  } finally {
    client.disconnect()
  }
}
