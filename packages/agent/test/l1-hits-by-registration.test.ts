import { createNames } from '@heatsink/protocol'
import { ManualClock } from '@heatsink/sketch'
import { useTestRedis } from '@heatsink/test'
import type { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { demoteRegistry, publishRegistry } from '../src/testing.js'
import { useAgents, waitFor } from './support/helpers.js'
import { windowReports } from './support/window-reports.js'

const redis = useTestRedis()
const newAgent = useAgents(redis)

const START = 1_700_000_000_000

const reports = (client: Redis, agentId: string) => windowReports(client, redis().namespace, agentId)

// The router remembers the local_cache key it found last, so that a key read again and again by one string skips
// the registry's lookup. These reads all use one string: what they are counted to must follow the registry.
describe('L1 hits of a key read again and again by one string', () => {
  it('count to the registration of the moment: none while demoted, the new one after a promotion', async () => {
    const clock = new ManualClock(START)
    const agent = newAgent({ agentId: 'by-registration', clock, maxPartialReportsPerWindow: 0 })
    await agent.ready()
    const admin = redis().client()
    const names = createNames(redis().namespace)
    const key = `${redis().namespace}:profile`
    await admin.set(key, 'v1')
    await publishRegistry(admin, names, { key })
    await waitFor(() => agent.stats().l1Entries === 1, 'the promotion filling L1')
    for (let i = 0; i < 3; i++) expect(await agent.get(key)).toBe('v1')
    expect(agent.stats().l1Hits).toBe(3)

    await demoteRegistry(admin, names, key)
    await waitFor(() => agent.mitigation(key) === undefined, 'the demotion')
    await admin.set(key, 'v2')
    expect(await agent.get(key)).toBe('v2')
    expect(agent.stats().l1Hits).toBe(3)

    // Promoted again as coalesce, then as local_cache: a new registration each time.
    await publishRegistry(admin, names, { key, mitigation: 'coalesce' })
    await waitFor(() => agent.mitigation(key) === 'coalesce', 'the coalesce promotion')
    expect(await agent.get(key)).toBe('v2')
    expect(agent.stats().l1Hits).toBe(3)
    await publishRegistry(admin, names, { key })
    await waitFor(() => agent.stats().l1Entries === 1, 'the local_cache promotion filling L1')
    for (let i = 0; i < 5; i++) expect(await agent.get(key)).toBe('v2')
    expect(agent.stats().l1Hits).toBe(8)

    clock.advance(1000)
    await waitFor(async () => (await reports(admin, 'by-registration')).length === 1, 'the window report')
    const [report] = await reports(admin, 'by-registration')
    // The window's report counts the key as registered now: the three hits of the first registration left with it.
    expect(report?.hotKeyStats.find((stats) => stats.key === key)).toMatchObject({ l1Hits: 5 })
  })
})
