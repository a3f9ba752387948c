import { type Agent, createAgent } from '@heatsink/agent'
import { registryEntry } from '@heatsink/agent/testing'
import { type Aggregator, createAggregator, loadConfig } from '@heatsink/aggregator'
import { encodeRegistryEvent, WIRE_VERSION } from '@heatsink/protocol'
import { useTestPostgres, useTestRedis } from '@heatsink/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

// Both halves of registry signing together: an aggregator with HEATSINK_REGISTRY_KEY and an agent with the same
// registryKey agree on the MAC, and the agent refuses what anyone else publishes on the channel.
const redis = useTestRedis({ scope: 'all' })
const postgres = useTestPostgres({ scope: 'all' })
const KEY = 'e2e-registry-key-0123456789abcdefghij'

async function until(what: string, condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe('end to end: a signed registry', () => {
  let aggregator: Aggregator
  let agent: Agent

  beforeAll(async () => {
    aggregator = createAggregator(
      loadConfig({
        REDIS_URL: redis().url,
        DATABASE_URL: postgres().url,
        HEATSINK_NAMESPACE: redis().namespace,
        HEATSINK_REGISTRY_KEY: KEY,
        PORT: '0',
      }),
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
