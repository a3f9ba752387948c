import type { Aggregator } from '@heatsink/aggregator'
import { plantedKeys, runFleet } from '@heatsink/bench'
import { useTestPostgres, useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
import { inProcessAggregator } from '../e2e/support/in-process.js'

const redis = useTestRedis()
const postgres = useTestPostgres()

const WINDOW_MS = 500
const HOT_RPS = 2000
const HOT_PER_WINDOW = (HOT_RPS * WINDOW_MS) / 1000
// The same cluster-wide background (40,000 requests a window, Zipf 1.1 over 100,000 keys) whatever the fleet.
const BACKGROUND_PER_WINDOW = 40_000

describe('detection over a fleet of agents (real Redis, real aggregator, agents in child processes)', () => {
  let aggregator: Aggregator | undefined
  afterEach(async () => {
    await aggregator?.stop()
    aggregator = undefined
  })

  async function run(fleetSize: number, processes: number, concentratedOn?: number) {
    const { url, namespace } = redis()
    aggregator = inProcessAggregator(
      { redisUrl: url, databaseUrl: postgres().url, namespace },
      {
        HEATSINK_HOT_RPS: String(HOT_RPS),
        HEATSINK_WINDOW_MS: String(WINDOW_MS),
        HEATSINK_COOL_SECONDS: '600',
      },
    )
    await aggregator.start()
    return runFleet({
      redisUrl: url,
      namespace,
      redis: redis().client(),
      fleetSize,
      processes,
      windowMs: WINDOW_MS,
      windows: 30,
      hotPerWindow: HOT_PER_WINDOW,
      planted: plantedKeys(HOT_PER_WINDOW, concentratedOn),
      backgroundKeys: 100_000,
      backgroundPerAgent: BACKGROUND_PER_WINDOW / fleetSize,
      zipfS: 1.1,
      seed: fleetSize,
      tuned: true,
    })
  }

  it.each([
    [50, 2],
    [200, 4],
  ])(
    'finds every key hot cluster-wide when it is spread evenly over %i agents, and promotes no cold key',
    async (fleetSize, processes) => {
      const outcome = await run(fleetSize, processes)
      console.log(
        `fleet of ${fleetSize}: recall ${outcome.recall.toFixed(3)} over ${outcome.hot.length} hot keys, ` +
          `${outcome.coldPromoted.length} cold keys promoted, report floor ${outcome.floor}, ` +
          `${Math.round(outcome.bytesPerAgentPerWindow)} report bytes per agent per window`,
      )
      // 60 planted keys, and the Zipf head over the threshold.
      expect(outcome.hot.length).toBeGreaterThanOrEqual(60)
      expect(outcome.missed).toEqual([])
      expect(outcome.recall).toBeGreaterThanOrEqual(0.99)
      expect(outcome.coldPromoted).toEqual([])
      expect(outcome.floor).toBe(Math.floor(HOT_PER_WINDOW / fleetSize))
    },
    90_000,
  )

  it('stays correct when the hot keys are concentrated on a few agents of the fleet', async () => {
    const outcome = await run(50, 2, 4)
    expect(outcome.missed).toEqual([])
    expect(outcome.coldPromoted).toEqual([])
  }, 90_000)
})
