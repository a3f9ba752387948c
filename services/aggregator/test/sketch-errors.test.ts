import { createNames, type SketchError, type WindowReport } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
import { describe, expect, it } from 'vitest'
import { createMetrics } from '../src/metrics.js'
import { SketchErrors } from '../src/traffic/sketch-errors.js'
import { makeReport } from './support/reports.js'

const WINDOW = 1_700_000_000_000

function report(
  agentId: string,
  windowStart: number,
  sketchError: SketchError,
  partial = false,
): WindowReport {
  return makeReport(agentId, windowStart, {}, { sketchError, partial, total: 10_000 })
}

function sample(
  keys: SketchError['keys'],
  mean: number,
  max: number,
  sampled = 10,
  overBound = 0,
): SketchError {
  return { sampled, meanRelativeError: mean, maxRelativeError: max, bound: 13.3, overBound, keys }
}

describe('SketchErrors', () => {
  const redis = useTestRedis()

  it("exports the newest window's error over every agent's sample, and keeps per-key samples for the stats", async () => {
    const metrics = createMetrics()
    const errors = new SketchErrors(redis().client(), createNames(redis().namespace), {
      sampledKeys: metrics.sketchSampledKeys,
      overBound: metrics.sketchOverBound,
      meanRelativeError: metrics.sketchMeanRelativeError,
      maxRelativeError: metrics.sketchMaxRelativeError,
    })
    await errors.record(report('a1', WINDOW, sample([['product:7', 110, 100]], 0.02, 0.1, 10, 1)))
    await errors.record(report('a2', WINDOW, sample([['product:7', 100, 100]], 0.04, 0.3, 30)))
    // A partial report carries no sample worth counting.
    await errors.record(report('a3', WINDOW, sample([], 0.9, 0.9), true))
    const text = await metrics.registry.metrics()
    expect(text).toContain('heatsink_sketch_sampled_keys_total 40')
    expect(text).toContain('heatsink_sketch_over_bound_total 1')
    // (0.02 x 10 + 0.04 x 30) / 40 = 0.035, and the larger maximum.
    expect(Number(/^heatsink_sketch_mean_relative_error (\S+)$/m.exec(text)?.[1])).toBeCloseTo(0.035)
    expect(text).toContain('heatsink_sketch_max_relative_error 0.3')
    // A newer window starts afresh.
    await errors.record(report('a1', WINDOW + 1000, sample([], 0.01, 0.05)))
    expect(await metrics.registry.metrics()).toContain('heatsink_sketch_max_relative_error 0.05')

    expect(await errors.read('product:7', WINDOW)).toEqual({
      agents: 2,
      meanRelativeError: 0.05,
      maxRelativeError: 0.1,
    })
    expect(await errors.read('product:7', WINDOW + 1000)).toBeNull()
    expect(await errors.read('never:sampled', WINDOW)).toBeNull()
  })
})
