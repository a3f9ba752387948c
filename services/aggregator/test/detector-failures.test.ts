import { Counter, Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { Detector, MAX_PROMOTION_ATTEMPTS } from '../src/detection/detector.js'
import { DEFAULT_MITIGATION_POLICY } from '../src/detection/mitigation-policy.js'
import type { PromotionRequest, RegistryPort } from '../src/detection/registry-port.js'
import { RegistryUnavailableError } from '../src/errors.js'
import { silent } from './support/fixtures.js'

const NO_FORMS = { seen: async () => 0 }

/** A registry whose promote fails with the errors given, in turn, then succeeds. */
function failingRegistry(failures: unknown[]) {
  const attempts: PromotionRequest[] = []
  const registry: RegistryPort = {
    promote: async (input) => {
      attempts.push(input)
      const failure = failures.shift()
      if (failure !== undefined) throw failure
      return { entry: {} as never, created: true, changed: true }
    },
    demote: async () => false,
    list: async () => [],
  }
  return { registry, attempts }
}

function detector(registry: RegistryPort) {
  const abandoned = new Counter({ name: 'abandoned', help: 'h', registers: [new Registry()] })
  const created = new Detector({
    registry,
    policy: DEFAULT_MITIGATION_POLICY,
    // No crossing here is write-hot, so no command forms are asked for.
    forms: NO_FORMS,
    windowMs: 1000,
    hotRps: 1000,
    replicaId: 'test',
    log: silent,
    abandoned,
  })
  return { detector: created, abandoned }
}

const crossing = { key: 'a\0b', windowStart: 0, count: 1500, writes: 0, misses: 0 }

describe('Detector when a promotion fails for a reason other than an outage', () => {
  it('retries it, and promotes it once the failure passes', async () => {
    const { registry, attempts } = failingRegistry([new Error('deadlock detected')])
    const { detector: d, abandoned } = detector(registry)
    await d.onCrossings([crossing])
    expect(d.pending).toBe(1)
    await d.retryPending()
    expect(d.pending).toBe(0)
    expect(attempts.map((a) => a.key)).toEqual(['a\0b', 'a\0b'])
    expect((await abandoned.get()).values[0]?.value).toBe(0)
  })

  it(`abandons it after ${MAX_PROMOTION_ATTEMPTS} failures, counted, and a later crossing starts afresh`, async () => {
    const failures = Array.from({ length: MAX_PROMOTION_ATTEMPTS }, () => new Error('invalid byte sequence'))
    const { registry, attempts } = failingRegistry(failures)
    const { detector: d, abandoned } = detector(registry)
    await d.onCrossings([crossing])
    for (let i = 0; i < MAX_PROMOTION_ATTEMPTS + 2; i++) await d.retryPending()
    expect(attempts).toHaveLength(MAX_PROMOTION_ATTEMPTS)
    expect(d.pending).toBe(0)
    expect((await abandoned.get()).values[0]?.value).toBe(1)
    await d.onCrossings([crossing])
    expect(attempts).toHaveLength(MAX_PROMOTION_ATTEMPTS + 1)
  })

  it('counts failures across new crossings of a key that stays hot', async () => {
    const failures = Array.from({ length: MAX_PROMOTION_ATTEMPTS }, () => new Error('invalid byte sequence'))
    const { registry, attempts } = failingRegistry(failures)
    const { detector: d, abandoned } = detector(registry)
    for (let i = 0; i < MAX_PROMOTION_ATTEMPTS; i++) await d.onCrossings([crossing])
    expect(attempts).toHaveLength(MAX_PROMOTION_ATTEMPTS)
    expect(d.pending).toBe(0)
    expect((await abandoned.get()).values[0]?.value).toBe(1)
  })

  it('keeps retrying through an outage without using up its attempts', async () => {
    const outage = Array.from(
      { length: 5 },
      () => new RegistryUnavailableError('promote', { cause: new Error('ECONNREFUSED') }),
    )
    const { registry, attempts } = failingRegistry([...outage, new Error('once'), new Error('twice')])
    const { detector: d, abandoned } = detector(registry)
    await d.onCrossings([crossing])
    for (let i = 0; i < 8 && d.pending > 0; i++) await d.retryPending()
    expect(attempts).toHaveLength(8)
    expect(d.pending).toBe(0)
    expect((await abandoned.get()).values[0]?.value).toBe(0)
  })
})
