import { createNames } from '@heatsink/protocol'
import { decodeEnvelope } from '@heatsink/stampede'
import { useTestRedis } from '@heatsink/test'
import type { Redis as PlainRedis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { type Agent, Redis } from '../../src/index.js'
import { publishRegistry } from '../../src/testing.js'
import { startMonitor, useAgents, waitFor } from '../support/helpers.js'

const redis = useTestRedis()
const newAgent = useAgents(redis)
const clients: Redis[] = []
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.quit().catch(() => {})))
})

/** What the test reads and writes through: createAgent's methods or the drop-in's. */
type Door = Pick<PlainRedis, 'get' | 'mget' | 'set' | 'del'>

/** createAgent's front door, and the drop-in's (the proxy's is tested in services/proxy): one agent each. */
const DOORS: Record<string, () => Promise<{ door: Door; agent: Pick<Agent, 'getOrLoad' | 'mitigation'> }>> = {
  createAgent: async () => {
    const agent = newAgent({ l1: { maxTtlMs: 60_000 } })
    await agent.ready()
    return { door: agent, agent }
  },
  'the drop-in': async () => {
    const { namespace, url } = redis()
    const client = new Redis(url, { heatsink: { namespace, l1: { maxTtlMs: 60_000 } } })
    clients.push(client)
    await client.heatsink.ready()
    return { door: client, agent: client.heatsink }
  },
}

// The decision these tests hold every front door to is stated once, on CommandRouter: plain commands are sent as
// they are.
describe.each(Object.keys(DOORS))('plain commands through %s', (name) => {
  const open = DOORS[name] as (typeof DOORS)[string]

  it('read a key getOrLoad filled as Redis holds it (its envelope), whatever its mitigation', async () => {
    const { door, agent } = await open()
    const { namespace } = redis()
    const plain = redis().client()
    const keys = {
      none: `${namespace}:loaded:plain`,
      local_cache: `${namespace}:loaded:l1`,
      coalesce: `${namespace}:loaded:coalesce`,
    }
    for (const key of Object.values(keys))
      await agent.getOrLoad(key, async () => ({ at: key }), { ttlSeconds: 60 })
    await publishRegistry(
      plain,
      createNames(namespace),
      { key: keys.local_cache },
      { key: keys.coalesce, mitigation: 'coalesce' },
    )
    await waitFor(() => agent.mitigation(keys.coalesce) === 'coalesce', 'the promotions')
    await waitFor(() => agent.mitigation(keys.local_cache) === 'local_cache', 'the promotions')
    for (const key of Object.values(keys)) {
      const stored = await plain.get(key)
      expect(decodeEnvelope(stored ?? '')?.payload).toBe(JSON.stringify({ at: key }))
      // Twice: the second read of the local_cache key comes from L1.
      for (let i = 0; i < 2; i++) expect(await door.get(key)).toBe(stored)
      expect(await door.mget(key, `${namespace}:absent`)).toEqual([stored, null])
    }
  })

  it('send SET and DEL as SET and DEL, leaving a getOrLoad lease on the key to the load that holds it', async () => {
    const { door } = await open()
    const { namespace, url } = redis()
    const names = createNames(namespace)
    const plain = redis().client()
    const key = `${namespace}:leased`
    await plain.set(names.leaseKey(key), 'other-agent:token', 'PX', 60_000)
    const monitor = await startMonitor(url)
    try {
      expect(await door.set(key, 'written', 'PX', 60_000)).toBe('OK')
      expect(await door.del(key)).toBe(1)
      await monitor.sync()
      expect(monitor.count('set', key)).toBe(1)
      expect(monitor.count('del', key)).toBe(1)
      expect(monitor.seen.filter((args) => args[0]?.toLowerCase().startsWith('eval'))).toEqual([])
      expect(await plain.get(names.leaseKey(key))).toBe('other-agent:token')
    } finally {
      monitor.stop()
    }
  })
})
