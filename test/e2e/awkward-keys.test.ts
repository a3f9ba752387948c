import { type Agent, createAgent, Redis } from '@heatsink/agent'
import type { Aggregator } from '@heatsink/aggregator'
import { useTestPostgres, useTestRedis } from '@heatsink/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { inProcessAggregator, until } from './support/in-process.js'

const redis = useTestRedis({ scope: 'all' })
const postgres = useTestPostgres({ scope: 'all' })

// Keys Postgres text cannot hold (NUL) or that UTF-8 cannot express (a lone surrogate) must reach agents intact,
// whether detection promotes them or an operator does (migrations/0002_raw_key_bytes.sql).
describe('end to end: awkward keys reach the agents', () => {
  let aggregator: Aggregator
  let agent: Agent
  let frontDoor: Redis

  beforeAll(async () => {
    aggregator = inProcessAggregator(
      { redisUrl: redis().url, databaseUrl: postgres().url, namespace: redis().namespace },
      { HEATSINK_HOT_RPS: '200', HEATSINK_WINDOW_MS: '1000' },
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
      await until('the automatic promotion', () => agent.mitigation(key) !== undefined)
    } finally {
      clearInterval(timer)
    }
    await until('the front door to see it', () => frontDoor.heatsink.mitigation(key) !== undefined)
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
    await until('the agent to see it', () => agent.mitigation(key) === 'coalesce')
    await until('the front door to see it', () => frontDoor.heatsink.mitigation(key) === 'coalesce')
    expect(await aggregator.registry.demote(key, { actor: 'test', reason: 'test' })).toBe(true)
    await until('the agent to drop it', () => agent.mitigation(key) === undefined)
  })
})
