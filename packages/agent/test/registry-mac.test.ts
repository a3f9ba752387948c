import { createNames, encodeRegistryEvent, encodeSnapshot, WIRE_VERSION } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
import { describe, expect, it } from 'vitest'
import { resolveOptions } from '../src/options/resolve-options.js'
import { publishRegistry, registryEntry } from '../src/testing.js'
import { useAgents, waitFor } from './support/helpers.js'

// Without a MAC, anyone who can PUBLISH on the registry channel could push an event with the next
// version; the agent applied it and then ignored the real one as a duplicate. With a registry key the agent
// applies only what carries the control plane's MAC.
const redis = useTestRedis()
const newAgent = useAgents(redis)
const KEY = 'test-registry-key-0123456789abcdef'

/** A well-formed promote event of `version`, unsigned: what a forger can publish without the key. */
function forgedPromote(version: number, key: string): string {
  return encodeRegistryEvent({
    v: WIRE_VERSION,
    kind: 'registry',
    version,
    at: Date.now(),
    type: 'promote',
    entry: registryEntry(key, 'coalesce', version),
  })
}

function setup() {
  const { namespace } = redis()
  const names = createNames(namespace)
  return { names, plain: redis().client(), key: (name: string) => `${namespace}:${name}` }
}

describe('an agent with a registry key', () => {
  it('sets aside a forged event with the next version, then applies the genuine one of that version', async () => {
    const { names, plain, key } = setup()
    const agent = newAgent({ registryKey: KEY })
    await agent.ready()
    await publishRegistry(plain, { names, registryKey: KEY }, { key: key('first') })
    await waitFor(() => agent.stats().registryVersion === 1, 'the signed version 1')

    await plain.publish(names.registryChannel, forgedPromote(2, key('forged')))
    await waitFor(() => agent.stats().forgedMessages === 1, 'the forged event counted')
    expect(agent.stats()).toMatchObject({ badMessages: 1, registryVersion: 1 })
    expect(agent.mitigation(key('forged'))).toBeUndefined()

    // The control plane's own version 2 is not mistaken for a duplicate.
    await publishRegistry(plain, { names, registryKey: KEY }, { key: key('genuine'), mitigation: 'split' })
    await waitFor(() => agent.mitigation(key('genuine')) === 'split', 'the genuine version 2')
    expect(agent.stats()).toMatchObject({ registryVersion: 2, forgedMessages: 1 })
    expect(agent.mitigation(key('forged'))).toBeUndefined()
  })

  it('never applies unsigned events, even from a publisher that is otherwise correct', async () => {
    const { names, plain, key } = setup()
    const agent = newAgent({ registryKey: KEY })
    await agent.ready()
    await publishRegistry(plain, names, { key: key('unsigned') })
    await waitFor(() => agent.stats().forgedMessages >= 1, 'the unsigned event refused')
    expect(agent.mitigation(key('unsigned'))).toBeUndefined()
    expect(agent.stats().registryVersion).toBe(0)
  })

  it('refuses a forged snapshot and keeps the signed view', async () => {
    const { names, plain, key } = setup()
    await publishRegistry(plain, { names, registryKey: KEY }, { key: key('kept') })
    const agent = newAgent({ registryKey: KEY, registryCheckMs: 50 })
    await agent.ready()
    expect(agent.mitigation(key('kept'))).toBe('local_cache')

    // A forged hash with a higher version: the periodic check reloads it and must set it aside.
    const forged = encodeSnapshot({
      v: WIRE_VERSION,
      kind: 'snapshot',
      version: 5,
      at: Date.now(),
      entries: [registryEntry(key('planted'), 'coalesce', 5)],
    })
    await plain.hset(names.registrySnapshotKey, 'version', '5', 'snapshot', forged)
    await waitFor(() => agent.stats().forgedMessages >= 1, 'the forged snapshot refused')
    expect(agent.mitigation(key('planted'))).toBeUndefined()
    expect(agent.mitigation(key('kept'))).toBe('local_cache')
    expect(agent.stats().registryVersion).toBe(1)
  })

  it('an agent started on a forged snapshot holds nothing from it', async () => {
    const { names, plain, key } = setup()
    const forged = encodeSnapshot({
      v: WIRE_VERSION,
      kind: 'snapshot',
      version: 3,
      at: Date.now(),
      entries: [registryEntry(key('planted'), 'local_cache', 3)],
    })
    await plain.hset(names.registrySnapshotKey, 'version', '3', 'snapshot', forged)
    const agent = newAgent({ registryKey: KEY })
    await agent.ready()
    expect(agent.mitigation(key('planted'))).toBeUndefined()
    expect(agent.stats()).toMatchObject({ registryVersion: 0, forgedMessages: 1, badMessages: 1 })
  })
})

describe('an agent without a registry key', () => {
  it('applies unsigned and signed events as before', async () => {
    const { names, plain, key } = setup()
    const agent = newAgent()
    await agent.ready()
    await publishRegistry(plain, { names, registryKey: KEY }, { key: key('signed') })
    await waitFor(() => agent.mitigation(key('signed')) === 'local_cache', 'the signed event')
    await plain.publish(names.registryChannel, forgedPromote(2, key('unsigned')))
    await waitFor(() => agent.mitigation(key('unsigned')) === 'coalesce', 'the unsigned event')
    expect(agent.stats()).toMatchObject({ forgedMessages: 0, badMessages: 0 })
  })
})

describe('the registryKey option', () => {
  it('is validated: at least 32 printable ASCII characters', () => {
    expect(() => resolveOptions({ redis: 'redis://x', registryKey: 'short' })).toThrow(/registryKey/)
    expect(() => resolveOptions({ redis: 'redis://x', registryKey: `${KEY} ` })).toThrow(/printable ASCII/)
    expect(resolveOptions({ redis: 'redis://x', registryKey: KEY }).registryKey).toBe(KEY)
    expect(resolveOptions({ redis: 'redis://x' }).registryKey).toBeNull()
  })
})
