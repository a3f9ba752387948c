import { type Agent, createAgent } from '@heatsink/agent'
import { registryEntry } from '@heatsink/agent/testing'
import type { Aggregator } from '@heatsink/aggregator'
import { encodeRegistryEvent, WIRE_VERSION } from '@heatsink/protocol'
import { useTestPostgres, useTestRedis } from '@heatsink/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inProcessAggregator, until } from './support/in-process.js'

// Both halves of registry signing together: an aggregator with HEATSINK_REGISTRY_KEY and an agent with the same
// registryKey agree on the MAC, and the agent refuses what anyone else publishes on the channel.
const redis = useTestRedis({ scope: 'all' })
const postgres = useTestPostgres({ scope: 'all' })
const KEY = 'e2e-registry-key-0123456789abcdefghij'

describe('end to end: a signed registry', () => {
  let aggregator: Aggregator
  let agent: Agent

  beforeAll(async () => {
    aggregator = inProcessAggregator(
      { redisUrl: redis().url, databaseUrl: postgres().url, namespace: redis().namespace },
      { HEATSINK_REGISTRY_KEY: KEY },
    )
    await aggregator.start()
    agent = createAgent({ redis: redis().url, namespace: redis().namespace, registryKey: KEY })
    await agent.ready()
  }, 60_000)

  afterAll(async () => {
    await agent?.close()
    await aggregator?.stop()
  })

  it("applies the aggregator's changes and refuses a forged event with the next version", async () => {
    const promote = (key: string) =>
      aggregator.registry.promote({
        key,
        mitigation: 'coalesce',
        source: 'manual',
        actor: 'e2e',
        reason: 'test',
      })
    const first = `${redis().namespace}:first`
    await promote(first)
    await until('the signed promotion', () => agent.mitigation(first) === 'coalesce')
    const version = agent.stats().registryVersion

    const forged = `${redis().namespace}:forged`
    const event = encodeRegistryEvent({
      v: WIRE_VERSION,
      kind: 'registry',
      version: version + 1,
      at: Date.now(),
      type: 'promote',
      entry: registryEntry(forged, 'local_cache', version + 1),
    })
    await redis().client().publish(aggregator.names.registryChannel, event)
    await until('the forged event refused', () => agent.stats().forgedMessages === 1)

    const second = `${redis().namespace}:second`
    await promote(second)
    await until('the genuine next version', () => agent.mitigation(second) === 'coalesce')
    expect(agent.stats().registryVersion).toBe(version + 1)
    expect(agent.mitigation(forged)).toBeUndefined()
  })
})
