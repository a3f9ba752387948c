import { createNames } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
import { describe, expect, it } from 'vitest'
import { AgentDirectory } from '../src/agents/agent-directory.js'
import { ManualClock, silent } from './support/fixtures.js'
import { makeReport } from './support/reports.js'

const redis = useTestRedis()

describe('AgentDirectory', () => {
  it('marks an agent stale after three silent windows and forgets it after ten minutes', async () => {
    const clock = new ManualClock()
    const agents = new AgentDirectory(
      redis().client(),
      createNames(redis().namespace),
      1000,
      () => clock.now(),
      silent,
    )
    const sketchError = {
      sampled: 40,
      meanRelativeError: 0.01,
      maxRelativeError: 0.2,
      overBound: 0,
      bound: 9,
      keys: [],
    }
    await agents.record([
      makeReport('quiet', 0, {}, { dropped: 1, registryVersion: 4 }),
      makeReport('busy', 0, {}, { registryVersion: 5, sketchError }),
    ])
    clock.advance(2000)
    // A partial report measures no error: the last measured one stays.
    await agents.record([makeReport('busy', 1000, {}, { dropped: 2, partial: true })])
    clock.advance(1500)

    expect(await agents.list()).toEqual([
      {
        agentId: 'busy',
        lastReportAt: clock.now() - 1500,
        lastReportAgeMs: 1500,
        reportsDropped: 2,
        registryVersion: null,
        stale: false,
        sketchError: { sampled: 40, meanRelativeError: 0.01, maxRelativeError: 0.2, overBound: 0 },
      },
      {
        agentId: 'quiet',
        lastReportAt: clock.now() - 3500,
        lastReportAgeMs: 3500,
        reportsDropped: 1,
        registryVersion: 4,
        stale: true,
        sketchError: null,
      },
    ])

    clock.advance(10 * 60_000 - 3000)
    expect((await agents.list()).map((agent) => agent.agentId)).toEqual(['busy'])
    // Forgotten means removed from Redis, its dropped count and sketch error with it.
    expect(
      Object.keys(await redis().client().hgetall(createNames(redis().namespace).agentsKey)).sort(),
    ).toEqual([' dropped\nbusy', ' sketch\nbusy', 'busy'])
  })

  it('never fails ingest: a key of another type makes recording a no-op until it is fixed', async () => {
    const names = createNames(redis().namespace)
    const agents = new AgentDirectory(redis().client(), names, 1000, () => 0, silent)
    await redis().client().set(names.agentsKey, 'not a hash')
    await expect(agents.record([makeReport('a', 0, {})])).resolves.toBeUndefined()
    await redis().client().del(names.agentsKey)
    await agents.record([makeReport('a', 0, {})])
    expect((await agents.list()).map((agent) => agent.agentId)).toEqual(['a'])
  })
})
