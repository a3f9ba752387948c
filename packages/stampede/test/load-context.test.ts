import { ManualClock } from '@heatsink/sketch'
import { afterEach, describe, expect, it } from 'vitest'
import { GuardClosedError, type LoadContext } from '../src/index.js'
import { agentsOf, deferred, keyOf, until, useTestRedis } from './support.js'

const t = useTestRedis()
const startAgent = agentsOf(t, afterEach)
const START = 1_700_000_000_000
// Leases are real Redis TTLs: long ones keep them from running out while a manual clock stands still.
const LEASE = { leaseMs: 60_000 }

describe('the loader context and callers that abort', () => {
  it('hands a background refresh the stale value, background: true, and a quiet signal', async () => {
    const clock = new ManualClock(START)
    const { guard } = await startAgent({ clock, ...LEASE })
    const key = keyOf(t(), 'stale')
    const options = { ttlSeconds: 10, staleSeconds: 60, jitter: 0, xfetchBeta: 0 }
    expect(await guard.getOrLoad(key, () => 'v1', options)).toBe('v1')
    clock.advance(11_000)

    const seen: LoadContext<string>[] = []
    const refresh = (ctx: LoadContext<string>) => {
      seen.push(ctx)
      return 'v2'
    }
    expect(await guard.fetch(key, refresh, options)).toMatchObject({ value: 'v1', source: 'stale' })
    await guard.idle()
    expect(seen).toHaveLength(1)
    expect(seen[0]).toMatchObject({ key, background: true, gracedEntry: { value: 'v1' } })
    expect(seen[0]?.signal.aborted).toBe(false)
    expect(await guard.getOrLoad(key, refresh, options)).toBe('v2')
  })

  it("fires a running load's signal when the guard closes", async () => {
    const { guard } = await startAgent({ clock: new ManualClock(START), ...LEASE })
    const running = deferred<LoadContext<string>>()
    const call = guard.getOrLoad(
      keyOf(t(), 'closing'),
      (ctx: LoadContext<string>) => {
        running.resolve(ctx)
        return new Promise<string>(() => {})
      },
      { ttlSeconds: 60 },
    )
    const ctx = await running.promise
    const closed = call.catch((error: unknown) => error)
    await guard.close()
    expect(await closed).toBeInstanceOf(GuardClosedError)
    expect(ctx.signal.aborted).toBe(true)
    expect(ctx.signal.reason).toBeInstanceOf(GuardClosedError)
  })

  it('starts a new flight for a caller after everyone left the last one, which never calls its loader', async () => {
    const { guard } = await startAgent({ clock: new ManualClock(START), ...LEASE })
    const key = keyOf(t(), 'abandoned')
    let calls = 0
    const loader = (ctx: LoadContext<string>) => {
      calls++
      return ctx.signal.aborted ? 'from an abandoned flight' : 'loaded'
    }
    const leaving = new AbortController()
    const first = guard.getOrLoad(key, loader, { ttlSeconds: 60, signal: leaving.signal })
    leaving.abort('gone')
    await expect(first).rejects.toBe('gone')
    // The abandoned flight is still reading Redis; a new caller must not inherit its abort.
    expect(await guard.getOrLoad(key, loader, { ttlSeconds: 60 })).toBe('loaded')
    await until(
      async () =>
        (await t()
          .client()
          .exists(`${keyOf(t(), 'abandoned')}`)) === 1,
    )
    expect(calls).toBe(1)
  })
})
