import type { Agent } from '@heatsink/agent'
import { describe, expect, it } from 'vitest'
import { useAgents } from './support/agents.js'
import { usePrivateServices } from './support/private-services.js'
import { until } from './support/until.js'

const world = usePrivateServices()
const newAgent = useAgents()
const ROUNDS = 15

/** Waits until `agent` answers `key` from L1 again (channels back, entry refilled) with `value`. */
async function servingFromL1(agent: Agent, key: string, value: string): Promise<void> {
  await until(
    'L1 serving again',
    async () => {
      const hits = agent.stats().l1Hits
      return (await agent.get(key)) === value && agent.stats().l1Hits > hits
    },
    10_000,
    5,
  )
}

describe("CLIENT KILL TYPE pubsub of the agents' subscribers while a write happens", () => {
  const writers: Array<
    [
      string,
      (w: { agent: Agent; plain: import('ioredis').Redis }, key: string, value: string) => Promise<unknown>,
    ]
  > = [
    ['another agent (its broadcast on the invalidation channel)', (w, key, value) => w.agent.set(key, value)],
    [
      'a plain client (Redis tracking, redirected to the subscriber)',
      (w, key, value) => w.plain.set(key, value),
    ],
  ]

  it.each(writers)(
    'no read after the write and the kill returns the old value: written by %s',
    async (_name, write) => {
      const { redis } = world()
      const replica = await world().startReplica()
      const reader = await newAgent({ url: redis.url, namespace: redis.namespace, agentId: 'reader' })
      const writerAgent = await newAgent({ url: redis.url, namespace: redis.namespace, agentId: 'writer' })
      const plain = redis.client()
      const admin = redis.client()
      const key = `${redis.namespace}:profile`
      await plain.set(key, 'v0')
      expect((await replica.promote(key, { mitigation: 'local_cache' })).status).toBe(201)
      await until(
        'the promotion',
        () => reader.mitigation(key) === 'local_cache' && writerAgent.mitigation(key) === 'local_cache',
      )
      await servingFromL1(reader, key, 'v0')

      let killed = 0
      for (let round = 1; round <= ROUNDS; round++) {
        const value = `v${round}`
        const [kill] = await Promise.all([
          admin.client('KILL', 'TYPE', 'pubsub') as Promise<number>,
          write({ agent: writerAgent, plain }, key, value),
        ])
        killed += kill
        // Redis closed the subscriber before acknowledging the kill, and the reader takes that EOF in during the
        // same poll of its event loop as the acknowledgement, or an earlier one. So from the phase after it
        // (setImmediate) no read may return the old value, the first one included.
        await new Promise((resolve) => setImmediate(resolve))
        expect(await reader.get(key)).toBe(value)
        const reads: Array<string | null> = []
        while (!reader.stats().invalidationChannelUp) reads.push(await reader.get(key))
        expect(reads.filter((read) => read !== value)).toEqual([])
        await servingFromL1(reader, key, value)
      }
      // Each round killed both agents' subscribers (on a Cluster-less Redis, one per agent).
      expect(killed).toBeGreaterThanOrEqual(2 * ROUNDS)
      expect(reader.stats().l1Invalidations.channelLoss).toBeGreaterThanOrEqual(ROUNDS)
    },
    60_000,
  )
})
