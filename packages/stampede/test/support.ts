import { createNames, type HeatsinkNames } from '@heatsink/protocol'
import type { Clock } from '@heatsink/sketch'
import type { TestRedis } from '@heatsink/test'
import type { Redis } from 'ioredis'

export { type TestRedis, useTestRedis } from '@heatsink/test'
export { type ControlledLoader, controlledLoader, type Deferred, deferred } from '../src/testing.js'

import { createStampedeGuard, type StampedeGuard, type StampedeGuardOptions } from '../src/index.js'

/** mulberry32: a small seeded generator, uniform in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** One stand-in agent: a guard on its own command and subscriber connections. */
export interface TestAgent {
  guard: StampedeGuard
  redis: Redis
  subscriber: Redis
}

/** A guard on fresh connections of the test's Redis, under the test's namespace, ready. */
export async function startAgent(
  t: TestRedis,
  options: Partial<StampedeGuardOptions> & { clock: Clock },
  agentId = 'agent-1',
): Promise<TestAgent> {
  const redis = t.client()
  const subscriber = t.client()
  const guard = createStampedeGuard({ redis, subscriber, names: namesOf(t), agentId, ...options })
  await guard.ready()
  return { guard, redis, subscriber }
}

export function namesOf(t: TestRedis): HeatsinkNames {
  return createNames(t.namespace)
}

/** A cache key under the test's namespace, so cleanup removes it. */
export function keyOf(t: TestRedis, name: string): string {
  return `${t.namespace}:${name}`
}

/** Polls `check` on real time until it is true; for state another connection changes. */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

/**
 * Registers an afterEach that closes every guard the test started (before the Redis fixture's cleanup, as
 * vitest runs after-hooks in reverse order), and returns the starter.
 */
export function agentsOf(
  redis: () => TestRedis,
  afterEach: (hook: () => Promise<void>) => void,
): (options: Partial<StampedeGuardOptions> & { clock: Clock }, agentId?: string) => Promise<TestAgent> {
  let started: TestAgent[] = []
  afterEach(async () => {
    const closing = started
    started = []
    await Promise.all(closing.map((agent) => agent.guard.close()))
  })
  return async (options, agentId) => {
    const agent = await startAgent(redis(), options, agentId)
    started.push(agent)
    return agent
  }
}
