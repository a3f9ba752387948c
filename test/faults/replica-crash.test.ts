import { createNames } from '@heatsink/protocol'
import { describe, expect, it } from 'vitest'
import { usePrivateServices } from './support/private-services.js'
import { reportBurst, sendReports } from './support/stand-in-agents.js'
import { until } from './support/until.js'
import { pendingFor, pendingReports, windowSums } from './support/window-sums.js'

const world = usePrivateServices()
const WINDOW_MS = 1000
// Far above any sum here: this scenario is about counting, and promotions would only add Postgres traffic.
const NEVER_HOT = '1000000000'

describe('SIGKILL of one of two aggregator replicas mid-stream', () => {
  it('counts every report exactly once: each window sum equals what the agents sent', async () => {
    const { redis } = world()
    const names = createNames(redis.namespace)
    const env = { HEATSINK_HOT_RPS: NEVER_HOT, HEATSINK_WINDOW_MS: String(WINDOW_MS) }
    const [doomed, survivor] = [await world().startReplica(env), await world().startReplica(env)]
    const admin = redis.client()

    const now = Math.floor(Date.now() / WINDOW_MS) * WINDOW_MS
    const windows = [now - 3 * WINDOW_MS, now - 2 * WINDOW_MS, now - WINDOW_MS]
    const keys = Array.from({ length: 300 }, (_, i) => `${redis.namespace}:k:${i}`)
    // 1,200 reports before the crash, 400 after it; one report per agent and window.
    const before = reportBurst({ agents: 400, agentPrefix: 'a', windows, keys, keysPerReport: 100 })
    const after = reportBurst({
      agents: 400,
      agentPrefix: 'b',
      windows: [now],
      keys,
      keysPerReport: 100,
    })

    const sending = sendReports(admin, names, before.reports)
    // SIGKILL the moment the doomed replica holds entries it read and has not acknowledged: those must be
    // claimed by the survivor, not lost, and counted once.
    await until(
      'replica-1 holding unacknowledged reports',
      async () => (await pendingFor(admin, names, 'replica-1')) > 0,
      10_000,
      1,
    )
    doomed.kill('SIGKILL')
    // Acknowledgements the replica wrote just before it died may still be on their way to Redis. Redis drops a
    // connection only once it has read it to the end, so when none of the dead replica's is left, every command
    // it sent has run, and what is pending is what it left behind (counted before that, the count included
    // entries it had acknowledged, and the survivor could not claim them all).
    await doomed.exited
    await until('the dead replica’s connections closed at Redis', async () => {
      const clients = (await admin.client('LIST')) as string
      return !clients.includes('name=heatsink-aggregator:replica-1 ')
    })
    const orphaned = await pendingFor(admin, names, 'replica-1')
    await sending
    await sendReports(admin, names, after.reports)

    // The survivor claims entries idle for 5 s, checking every 2.5 s.
    await until('every report acknowledged', async () => (await pendingReports(admin, names)) === 0, 15_000)
    expect(orphaned).toBeGreaterThan(0)
    expect(await survivor.metric('heatsink_ingest_claimed_total')).toBeGreaterThanOrEqual(orphaned)
    for (const burst of [before, after]) {
      for (const [windowStart, sums] of burst.expected) {
        const counted = await windowSums(admin, names, windowStart, keys)
        expect(counted).toEqual(keys.map((key) => sums.get(key) ?? 0))
      }
    }
    expect(await admin.xlen(names.deadLetterStream)).toBe(0)
    expect(await survivor.status('/readyz')).toBe(200)
  }, 60_000)
})
