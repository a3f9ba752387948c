import { systemClock } from '@heatsink/sketch'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { decodeEnvelope } from '../src/index.js'
import { agentsOf, keyOf, useTestRedis } from './support.js'

const t = useTestRedis()
const startAgent = agentsOf(t, afterEach)

describe('refreshAhead', () => {
  it('reloads from the stored text the caller holds, without reading the key first', async () => {
    const { guard, redis } = await startAgent({ clock: systemClock })
    const key = keyOf(t(), 'rates')
    let loads = 0
    const loader = async () => ++loads
    expect(await guard.getOrLoad(key, loader, { ttlSeconds: 30 })).toBe(1)
    const stored = (await redis.get(key)) as string
    const gets = vi.spyOn(redis, 'get')

    guard.refreshAhead(key, stored, loader, { ttlSeconds: 30 })
    await guard.idle()

    expect(loads).toBe(2)
    expect(decodeEnvelope((await redis.get(key)) as string)?.payload).toBe('2')
    // The one GET is the assertion's own: the guard went straight to the lease, whose script compares the key.
    expect(gets).toHaveBeenCalledTimes(1)
  })

  it('does nothing when Redis no longer stores what the caller holds (a write came first)', async () => {
    const { guard, redis } = await startAgent({ clock: systemClock })
    const key = keyOf(t(), 'rates')
    let loads = 0
    const loader = async () => ++loads
    await guard.getOrLoad(key, loader, { ttlSeconds: 30 })
    const stored = (await redis.get(key)) as string
    await redis.set(key, 'written by someone else')

    guard.refreshAhead(key, stored, loader, { ttlSeconds: 30 })
    await guard.idle()

    expect(loads).toBe(1)
    expect(await redis.get(key)).toBe('written by someone else')
  })
})
