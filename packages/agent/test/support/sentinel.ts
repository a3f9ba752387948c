import {
  type RedisSentinel,
  type RedisSentinelOptions,
  ServiceUnavailableError,
  startRedisSentinel,
} from '@heatsink/devservices'
import { afterAll, beforeAll, beforeEach } from 'vitest'

/**
 * A private Sentinel deployment (a primary, its replicas, three sentinels) for the file, stopped after it.
 * Where redis-server is not installed there is none to start, and the file's tests are skipped saying so.
 */
export function useRedisSentinel(options: RedisSentinelOptions = {}): () => RedisSentinel {
  let deployment: RedisSentinel | undefined
  let unavailable = ''
  beforeAll(async () => {
    try {
      deployment = await startRedisSentinel(options)
    } catch (error) {
      if (!(error instanceof ServiceUnavailableError)) throw error
      unavailable = error.message
    }
  }, 60_000)
  beforeEach((context) => {
    if (deployment === undefined) context.skip(`no Redis Sentinel: ${unavailable}`)
  })
  afterAll(async () => {
    await deployment?.stop()
  })
  return () => {
    if (deployment === undefined) throw new Error('no Sentinel deployment')
    return deployment
  }
}
