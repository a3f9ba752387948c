import { createNames, safeDecodeTuning } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
import { describe, expect, it } from 'vitest'
import { FLEET_MEMORY_WINDOWS, FleetTuner } from '../src/detection/fleet-tuner.js'
import { WindowCounters } from '../src/detection/window-counters.js'
import { makeReport } from './support/reports.js'

const WINDOW_MS = 1000
const START = 1_700_000_000_000

describe('FleetTuner', () => {
  const redis = useTestRedis()

  function tuner() {
    const names = createNames(redis().namespace)
    // 1,000 requests a window make a key hot: the floor is 1,000 / agents.
    const counters = new WindowCounters(redis().client(), {
      names,
      shards: 1,
      windowMs: WINDOW_MS,
      hotRps: 1000,
      retainMs: 600_000,
    })
    let now = START
    const fleet = new FleetTuner({
      redis: redis().client(),
      names,
      counters,
      windowMs: WINDOW_MS,
      now: () => now,
      registryKey: null,
    })
    return {
      fleet,
      names,
      // Reports from `agents` agents for the window that just ended, then the tick at the next window's start.
      async window(agents: number): Promise<void> {
        for (let i = 0; i < agents; i++) await counters.apply(makeReport(`agent-${i}`, now, { k: 1 }), fleet)
        now += WINDOW_MS
        await fleet.tick()
      },
    }
  }

  it('lowers the floor as soon as the fleet grows, and publishes it for agents', async () => {
    const { fleet, names, window } = tuner()
    await window(4)
    expect(fleet.reportFloor).toBe(250)
    await window(50)
    expect(fleet.reportFloor).toBe(20)
    const published = await redis().client().get(names.tuningKey)
    expect(safeDecodeTuning(published as string)).toMatchObject({
      ok: true,
      value: { activeAgents: 50, reportFloor: 20 },
    })
  })

  it('keeps the floor when reports stop arriving for a few windows (late under load), and raises it only once agents have been gone FLEET_MEMORY_WINDOWS windows', async () => {
    const { fleet, window } = tuner()
    await window(50)
    expect(fleet.reportFloor).toBe(20)
    // Five windows whose reports are late: the fleet is counted as nothing, yet the floor holds.
    for (let i = 0; i < 5; i++) await window(0)
    expect(fleet.reportFloor).toBe(20)
    // The fleet really shrank to 10 agents: the floor rises once the window of 50 reports, the first of six
    // counted so far, is no longer among the last FLEET_MEMORY_WINDOWS.
    for (let i = 0; i < FLEET_MEMORY_WINDOWS - 6; i++) await window(10)
    expect(fleet.reportFloor).toBe(20)
    await window(10)
    expect(fleet.activeAgents).toBe(10)
    expect(fleet.reportFloor).toBe(100)
  })
})
