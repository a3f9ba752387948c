import { createNames } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
import { type Agent, createAgent, Redis } from '../../src/index.js'
import { demoteRegistry, publishRegistry } from '../../src/testing.js'
import { waitFor } from '../support/helpers.js'

const redis = useTestRedis()
const clients: Redis[] = []
const agents: Agent[] = []
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.quit().catch(() => {})))
  await Promise.all(agents.splice(0).map((agent) => agent.close()))
})

// The split reconciler's interval (agent.ts): a pass runs within this much of the fold.
const RECONCILER_PASS_MS = 5500

describe('a split key folded by one data plane for a command its split cannot answer', () => {
  it('stays folded on every agent until the registry changes: none reopens it, and every read counts every write', async () => {
    const { namespace, url } = redis()
    const plain = redis().client()
    const names = createNames(namespace)
    const counter = `${namespace}:likes`
    await plain.set(counter, '100')
    // A: the drop-in, whose data plane folds and holds the key. B: another agent of the deployment, writing through
    // the split layout (its INCR adds to a shard while the shard's gate is open, to the base key once closed).
    const a = new Redis(url, { heatsink: { namespace } })
    clients.push(a)
    const b = createAgent({ redis: url, namespace, agentId: 'b' })
    agents.push(b)
    await Promise.all([a.heatsink.ready(), b.ready()])
    await publishRegistry(plain, names, { key: counter, mitigation: 'split', splitFactor: 4 })
    await waitFor(
      () => a.heatsink.mitigation(counter) === 'split' && b.mitigation(counter) === 'split',
      'the split on both agents',
    )
    // For 2 s after a promotion writes stay on the key itself, until every agent has heard of the split.
    await new Promise((resolve) => setTimeout(resolve, 2100))
    let expected = 100
    for (let i = 0; i < 10; i++) expect(await a.incr(counter)).toBe(++expected)
    expect(Number(await plain.get(counter))).toBeLessThan(expected)

    // STRLEN is no counter form: A folds the key into its base key and serves it there from now on.
    expect(await a.strlen(counter)).toBe(String(expected).length)
    expect(await plain.get(counter)).toBe(String(expected))

    // An agent starting now activates every split key it loads; the held one stays folded.
    const c = createAgent({ redis: url, namespace, agentId: 'c' })
    agents.push(c)
    await c.ready()
    await waitFor(() => c.mitigation(counter) === 'split', 'the split on the new agent')
    for (let i = 0; i < 20; i++) await b.incr(counter)
    expected += 20
    expect(await a.get(counter)).toBe(String(expected))
    expect(await plain.get(counter)).toBe(String(expected))

    // Whichever agent leads the reconciler, its passes leave the held layout's gates closed.
    await new Promise((resolve) => setTimeout(resolve, RECONCILER_PASS_MS))
    for (let i = 0; i < 20; i++) await b.incr(counter)
    expected += 20
    expect(await a.get(counter)).toBe(String(expected))
    expect(await plain.get(counter)).toBe(String(expected))

    // A demotion ends the hold: no mark is left in Redis.
    await demoteRegistry(plain, names, counter)
    await waitFor(() => a.heatsink.mitigation(counter) === undefined, 'the demotion')
    await waitFor(async () => (await plain.exists(names.splitHeldKey(counter))) === 0, 'the hold released')
    expect(await a.incr(counter)).toBe(expected + 1)
  }, 30_000)
})
