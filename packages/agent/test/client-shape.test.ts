import { createRequire } from 'node:module'
import { useTestRedis } from '@heatsink/test'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { type Agent, createAgent, InvalidAgentOptionError } from '../src/index.js'

const redis = useTestRedis()

/**
 * ioredis's module evaluated a second time: classes that are not the ones this package imports, as an
 * application's own ioredis (another version, a bundler's copy) would be. The cache is restored afterwards.
 */
function anotherCopyOfIoredis(): typeof import('ioredis') {
  const require = createRequire(import.meta.url)
  const builtDir = require.resolve('ioredis').replace(/index\.js$/, '')
  const saved = Object.entries(require.cache).filter(([path]) => path.startsWith(builtDir))
  for (const [path] of saved) delete require.cache[path]
  try {
    return require('ioredis')
  } finally {
    for (const [path, module] of saved) require.cache[path] = module
  }
}

/** The InvalidAgentOptionError createAgent throws for `client`. */
function refusal(client: unknown): InvalidAgentOptionError {
  try {
    createAgent({ redis: client as Redis })
  } catch (error) {
    if (error instanceof InvalidAgentOptionError) return error
    throw error
  }
  throw new Error('createAgent accepted the client')
}

describe('the client passed to createAgent', () => {
  const agents: Agent[] = []
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((agent) => agent.close()))
  })

  it('is accepted from another copy of ioredis, by what it can do, and the agent works on it', async () => {
    const other = anotherCopyOfIoredis()
    const client = new other.Redis(redis().url)
    try {
      expect(client).not.toBeInstanceOf(Redis)
      const agent = createAgent({ redis: client, namespace: redis().namespace })
      agents.push(agent)
      await agent.ready()
      const key = `${redis().namespace}:product`
      const value = await agent.getOrLoad(key, async () => ({ name: 'Lamp' }), { ttlSeconds: 60 })
      expect(value).toEqual({ name: 'Lamp' })
      expect(await agent.getOrLoad(key, async () => ({ name: 'loaded twice' }), { ttlSeconds: 60 })).toEqual({
        name: 'Lamp',
      })
      expect(agent.stats().stampede.upstreamLoads).toBe(1)
    } finally {
      client.disconnect()
    }
  })

  it.each([
    [null, /got null/],
    [42, /got number/],
    [{}, /the object lacks duplicate\(\), sendCommand\(\), disconnect\(\), on\(\), options, isCluster$/],
    [
      { duplicate() {}, sendCommand() {}, disconnect() {}, on() {}, options: {}, isCluster: true },
      /a Cluster lacks nodes\(\)$/,
    ],
  ])('is refused naming what it lacks: %j', (client, message) => {
    const error = refusal(client)
    expect(error).toMatchObject({ option: 'redis', code: 'E_INVALID_AGENT_OPTION' })
    expect(error.message).toMatch(/^redis: must be a Redis URL, or an ioredis Redis or Cluster client/)
    expect(error.message).toMatch(message)
  })

  it('is refused when it looks like a client but lacks sendCommand (a node-redis client, say)', () => {
    const error = refusal({ duplicate() {}, disconnect() {}, on() {}, options: {}, isCluster: false })
    expect(error.message).toMatch(/the object lacks sendCommand\(\)$/)
  })
})
