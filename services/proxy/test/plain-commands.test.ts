import { unwrapStored } from '@heatsink/agent'
import { createNames } from '@heatsink/protocol'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { commandCalls, promoteOnEvery, startProxy, usePrivateRedis } from './support/proxy-fixture.js'

// Counts commands with INFO commandstats: a server of this file's own.
const redis = usePrivateRedis()
const admins: Redis[] = []
afterEach(() => {
  for (const admin of admins.splice(0)) admin.disconnect()
})

// The decision every front door is held to is stated once, on the agent's CommandRouter: plain commands are sent
// as they are (packages/agent/test/front-door/plain-commands.test.ts holds createAgent and the drop-in to it).
describe('plain commands through the proxy', () => {
  it("read a key its agent's getOrLoad filled as Redis holds it (its envelope), from L1 too", async () => {
    const running = await startProxy(redis().url)
    const direct = new Redis(redis().url)
    admins.push(direct)
    const key = `${running.namespace}:loaded`
    await running.proxy.agent.getOrLoad(key, async () => ({ on: true }), { ttlSeconds: 60 })
    const stored = await direct.get(key)
    expect(unwrapStored(stored)).toBe('{"on":true}')
    const client = running.client()
    expect(await client.get(key)).toBe(stored)
    await promoteOnEvery(direct, key, [running])
    for (let i = 0; i < 3; i++) expect(await client.get(key)).toBe(stored)
  })

  it('send SET and DEL as SET and DEL, leaving a getOrLoad lease on the key to the load that holds it', async () => {
    const running = await startProxy(redis().url)
    const direct = new Redis(redis().url)
    admins.push(direct)
    const names = createNames(running.namespace)
    const key = `${running.namespace}:leased`
    await direct.set(names.leaseKey(key), 'other-agent:token', 'PX', 60_000)
    const before = await Promise.all(['set', 'del', 'evalsha', 'eval'].map((c) => commandCalls(direct, c)))
    const client = running.client()
    expect(await client.set(key, 'written', 'PX', 60_000)).toBe('OK')
    expect(await client.del(key)).toBe(1)
    const after = await Promise.all(['set', 'del', 'evalsha', 'eval'].map((c) => commandCalls(direct, c)))
    // The agent's own database marker SETs now and then: at least this SET, and no script.
    const [sets, dels, evalshas, evals] = after.map((calls, i) => calls - (before[i] as number))
    expect(sets).toBeGreaterThanOrEqual(1)
    expect(dels).toBe(1)
    expect([evalshas, evals]).toEqual([0, 0])
    expect(await direct.get(names.leaseKey(key))).toBe('other-agent:token')
  })
})
