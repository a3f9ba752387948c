import {
  createNames,
  type DetectionTuning,
  encodeTuning,
  signRegistryMessage,
  WIRE_VERSION,
  type WindowReport,
} from '@heatsink/protocol'
import { ManualClock } from '@heatsink/sketch'
import { useTestRedis } from '@heatsink/test'
import type { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { publishRegistry } from '../src/testing.js'
import { useAgents, waitFor } from './support/helpers.js'
import { windowReports } from './support/window-reports.js'

const redis = useTestRedis()
const newAgent = useAgents(redis)
const START = 1_700_000_000_000

async function finalReports(client: Redis, agentId: string): Promise<WindowReport[]> {
  return (await windowReports(client, redis().namespace, agentId)).filter((report) => !report.partial)
}

function tuning(watch: string[], reportFloor = 100): DetectionTuning {
  return {
    v: WIRE_VERSION,
    kind: 'tuning' as const,
    at: START,
    activeAgents: 200,
    reportFloor,
    watch,
    watchWindows: 3,
  }
}

describe('detection tuning from the control plane', () => {
  it('reports a watched key however thinly it is requested, until its watch lapses', async () => {
    const clock = new ManualClock(START)
    const agent = newAgent({ agentId: 'watching', clock, maxPartialReportsPerWindow: 0 })
    await agent.ready()
    const { namespace } = redis()
    const client = redis().client()
    const names = createNames(namespace)
    const thin = `${namespace}:thin:hot`
    await client.publish(names.tuningChannel, encodeTuning(tuning([thin])))
    await waitFor(() => agent.stats().watchedKeys === 1, 'the watch applied')
    // 40 background keys each requested more often than the thin key: it would not make a top 32.
    const background = Array.from({ length: 40 }, (_, i) => `${namespace}:bg:${i}`)
    clock.advance(1000) // the watch takes effect at the window end, counted exactly from the next window
    await waitFor(async () => (await finalReports(client, 'watching')).length === 1, 'the first report')
    for (let i = 0; i < 5; i++) await Promise.all(background.map((key) => agent.get(key)))
    await agent.get(thin)
    clock.advance(1000)
    await waitFor(async () => (await finalReports(client, 'watching')).length === 2, 'the second report')
    const second = (await finalReports(client, 'watching'))[1]
    expect(second?.candidates.find((c) => c.key === thin)).toMatchObject({ count: 1, reads: 1 })
    // Three windows after the message the watch has lapsed: the key is one of many cold keys again.
    clock.advance(2000)
    await waitFor(async () => (await finalReports(client, 'watching')).length === 3, 'the third report')
    for (let i = 0; i < 5; i++) await Promise.all(background.map((key) => agent.get(key)))
    await agent.get(thin)
    clock.advance(1000)
    await waitFor(async () => (await finalReports(client, 'watching')).length === 4, 'the fourth report')
    const fourth = (await finalReports(client, 'watching'))[3]
    expect(fourth?.candidates.some((c) => c.key === thin)).toBe(false)
  })

  it('lowers the report floor to the one published, reads the latest tuning on start, and pins registered keys', async () => {
    const { namespace } = redis()
    const client = redis().client()
    const names = createNames(namespace)
    await client.set(names.tuningKey, encodeTuning(tuning([], 3)))
    const registered = `${namespace}:registered`
    await publishRegistry(client, names, { key: registered, mitigation: 'coalesce' })
    const clock = new ManualClock(START)
    const agent = newAgent({ agentId: 'floor', clock, maxPartialReportsPerWindow: 0, sketch: { topK: 1 } })
    await agent.ready()
    await waitFor(async () => agent.stats().reportFloor === 3, 'the stored tuning')
    clock.advance(1000)
    await waitFor(async () => (await finalReports(client, 'floor')).length === 1, 'the first report')
    for (let i = 0; i < 4; i++) await agent.get(`${namespace}:four`)
    for (let i = 0; i < 3; i++) await agent.get(`${namespace}:three`)
    for (let i = 0; i < 2; i++) await agent.get(`${namespace}:two`)
    for (let i = 0; i < 5; i++) await agent.get(`${namespace}:five`)
    await agent.get(registered)
    clock.advance(1000)
    await waitFor(async () => (await finalReports(client, 'floor')).length === 2, 'the second report')
    const keys = (await finalReports(client, 'floor'))[1]?.candidates.map((c) => c.key)
    expect(keys).toEqual([`${namespace}:five`, `${namespace}:four`, `${namespace}:three`, registered])
  })

  it('refuses malformed and, with a registry key, unsigned tuning, and applies signed tuning', async () => {
    const registryKey = 'r'.repeat(40)
    const clock = new ManualClock(START)
    const agent = newAgent({ agentId: 'signed', clock, registryKey })
    await agent.ready()
    const client = redis().client()
    const names = createNames(redis().namespace)
    await client.publish(names.tuningChannel, '{"v":1,"kind":"tuning"')
    await client.publish(names.tuningChannel, encodeTuning(tuning([], 7)))
    await waitFor(async () => agent.stats().forgedMessages === 1, 'the forged message counted')
    expect(agent.stats().badMessages).toBe(2)
    expect(agent.stats().reportFloor).toBe(100)
    await client.publish(names.tuningChannel, signRegistryMessage(encodeTuning(tuning([], 7)), registryKey))
    await waitFor(async () => agent.stats().reportFloor === 7, 'the signed tuning applied')
  })
})
