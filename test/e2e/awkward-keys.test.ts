import { type Agent, createAgent, Redis } from '@heatsink/agent'
import { type Aggregator, createAggregator, loadConfig } from '@heatsink/aggregator'
import { useTestPostgres, useTestRedis } from '@heatsink/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const redis = useTestRedis({ scope: 'all' })
const postgres = useTestPostgres({ scope: 'all' })

async function waitFor(condition: () => boolean, what: string, timeoutMs = 8_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

// Keys Postgres text cannot hold (NUL) or that UTF-8 cannot express (a lone surrogate) must reach agents intact,
// whether detection promotes them or an operator does (migrations/0002_raw_key_bytes.sql).
describe('end to end: awkward keys reach the agents', () => {
  let aggregator: Aggregator
  let agent: Agent
  let frontDoor: Redis

  beforeAll(async () => {
    aggregator = createAggregator(
      loadConfig({
        REDIS_URL: redis().url,
        DATABASE_URL: postgres().url,
        HEATSINK_NAMESPACE: redis().namespace,
        HEATSINK_HOT_RPS: '200',
        HEATSINK_WINDOW_MS: '1000',
        PORT: '0',
      }),
    )
    await aggregator.start()
    agent = createAgent({ redis: redis().url, namespace: redis().namespace, agentId: 'awkward-agent' })
    await agent.ready()
    frontDoor = new Redis(redis().url, { heatsink: { namespace: redis().namespace } })
    await frontDoor.heatsink.ready()
  }, 60_000)

  afterAll(async () => {
    await frontDoor?.quit().catch(() => {})
    await agent?.close()
    await aggregator?.stop()
  })

  it('promotes a key with a NUL byte from its traffic and every client mitigates it', async () => {
    const key = `${redis().namespace}:a\0b`
    await redis().client().set(key, 'value with a NUL key', 'EX', 600)
    const timer = setInterval(() => {
      for (let i = 0; i < 10; i++) void agent.get(key).catch(() => {})
    }, 10)
    try {
      await waitFor(() => agent.mitigation(key) !== undefined, 'the automatic promotion')
    } finally {
      clearInterval(timer)
    }
    await waitFor(() => frontDoor.heatsink.mitigation(key) !== undefined, 'the front door to see it')
    expect((await aggregator.registry.get(key))?.source).toBe('auto')
    expect(await agent.get(key)).toBe('value with a NUL key')
  })

  it.each([
    ['an emoji', '🔥:post'],
    ['a lone surrogate', 'a\ud800b'],
    ['1024 bytes with a NUL', `${'k'.repeat(1021)}\0é`],
  ])('delivers a manual promotion of a key with %s exactly', async (_, key) => {
    await aggregator.registry.promote({
      key,
      mitigation: 'coalesce',
      source: 'manual',
      actor: 'test',
      reason: 'test',
    })
    await waitFor(() => agent.mitigation(key) === 'coalesce', 'the agent to see it')
    await waitFor(() => frontDoor.heatsink.mitigation(key) === 'coalesce', 'the front door to see it')
    expect(await aggregator.registry.demote(key, { actor: 'test', reason: 'test' })).toBe(true)
    await waitFor(() => agent.mitigation(key) === undefined, 'the agent to drop it')
  })
})
