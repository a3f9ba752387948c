import { ensureRedis, freePort, type RunningService } from '@heatsink/devservices'
import { afterAll, beforeAll } from 'vitest'

/**
 * A private redis-server for the calling test file, stopped after it: for tests that flush, pause (CLIENT PAUSE
 * stalls every client of a server) or count commands, which on the shared server would disturb other files.
 */
export function usePrivateRedis(): () => RunningService {
  let service: RunningService | undefined
  beforeAll(async () => {
    service = await ensureRedis({ url: `redis://127.0.0.1:${await freePort()}` })
  }, 60_000)
  afterAll(async () => {
    await service?.stop()
  })
  return () => {
    if (service === undefined) throw new Error('the private redis-server is not started yet')
    return service
  }
}
