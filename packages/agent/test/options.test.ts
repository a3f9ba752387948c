import type { Codec } from '@heatsink/stampede'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import {
  type AgentOptions,
  createAgent,
  Cluster as HeatsinkCluster,
  Redis as HeatsinkRedis,
  InvalidAgentOptionError,
  UnknownAgentOptionError,
} from '../src/index.js'
import { resolveOptions } from '../src/options/resolve-options.js'
import { thrownBy } from './support/helpers.js'

const url = 'redis://127.0.0.1:1'

describe('options', () => {
  it('has the documented defaults', () => {
    const options = resolveOptions({ redis: url })
    expect(options).toMatchObject({
      windowMs: 1000,
      l1: {
        maxEntries: 1024,
        ttlFraction: 0.2,
        maxTtlMs: 5000,
        maxBytes: 64 * 1024 * 1024,
        fillTimeoutMs: 500,
      },
      fastReportFloor: 100,
      maxPartialReportsPerWindow: 8,
      registryCheckMs: 2000,
      maxReplicaLagMs: 500,
      stampede: { leaseMs: 5000, maxLeaseMs: 60_000, pollMs: 50, maxWaitMs: 5000 },
    })
    expect(options.codec.decode(options.codec.encode({ a: 1 }))).toEqual({ a: 1 })
    expect(options.names.namespace).toBe('heatsink')
    expect(options.agentId).toMatch(/-\d+-[a-z0-9]+$/)
  })

  it.each([
    [{ l1: { maxEntries: 511 } }, 'l1.maxEntries', /from 512 to 2048, got 511/],
    [{ l1: { maxEntries: 2049 } }, 'l1.maxEntries', /from 512 to 2048, got 2049/],
    [{ l1: { ttlFraction: 0 } }, 'l1.ttlFraction', /above 0 and at most 1/],
    [{ l1: { ttlFraction: 1.5 } }, 'l1.ttlFraction', /above 0 and at most 1/],
    [{ l1: { maxTtlMs: 0 } }, 'l1.maxTtlMs', /at least 1/],
    [{ l1: { maxBytes: 65_535 } }, 'l1.maxBytes', /at least 65536, got 65535/],
    [{ l1: { fillTimeoutMs: 5 } }, 'l1.fillTimeoutMs', /at least 10, got 5/],
    [{ windowMs: 5 }, 'windowMs', /at least 10/],
    [{ namespace: 'has space' }, 'namespace', /invalid namespace/],
    [{ agentId: '' }, 'agentId', /1 to 128 characters/],
    [{ fastReportFloor: 0.5 }, 'fastReportFloor', /integer/],
    [{ stampede: { leaseMs: 0 } }, 'stampede.leaseMs', /at least 1/],
    [{ maxReplicaLagMs: 199 }, 'maxReplicaLagMs', /at least 200, got 199/],
    [{ stampede: { maxWaitMs: 1.5 } }, 'stampede.maxWaitMs', /integer/],
    [
      { codec: { encode: JSON.stringify } as unknown as Codec },
      'codec',
      /encode\(value\) and decode\(text\)/,
    ],
  ])('rejects %j naming %s', (options, option, message) => {
    const error = thrownBy(() => createAgent({ redis: url, ...options }))
    expect(error).toBeInstanceOf(InvalidAgentOptionError)
    expect(error).toMatchObject({ option, code: 'E_INVALID_AGENT_OPTION' })
    expect((error as Error).message).toMatch(message)
    expect((error as Error).message.startsWith(`${option}: `)).toBe(true)
  })

  it.each([
    [{ windowMS: 500 }, 'windowMS', 'unknown option windowMS — did you mean windowMs?'],
    [{ l1: { maxEntrys: 600 } }, 'l1.maxEntrys', 'unknown option l1.maxEntrys — did you mean maxEntries?'],
    [
      { stampede: { leasMs: 10 } },
      'stampede.leasMs',
      'unknown option stampede.leasMs — did you mean leaseMs?',
    ],
    [{ sketch: { Width: 1024 } }, 'sketch.Width', 'unknown option sketch.Width — did you mean width?'],
    [
      { colour: 'blue' },
      'colour',
      'unknown option colour — the options here are namespace, agentId, windowMs, l1, clock, log',
    ],
  ])(
    'rejects the unknown option in %j, naming its path and the nearest valid name',
    (options, option, message) => {
      const error = thrownBy(() => createAgent({ redis: url, ...(options as object) }))
      expect(error).toBeInstanceOf(UnknownAgentOptionError)
      expect(error).toBeInstanceOf(InvalidAgentOptionError)
      expect(error).toMatchObject({ option, code: 'E_UNKNOWN_AGENT_OPTION' })
      expect((error as Error).message.startsWith(message)).toBe(true)
    },
  )

  it.each([
    [{ windowMs: '1000' }, 'windowMs', 'windowMs: must be a number, got "1000"'],
    [{ l1: 5 }, 'l1', 'l1: must be an object, got 5'],
    [{ l1: { maxTtlMs: null } }, 'l1.maxTtlMs', 'l1.maxTtlMs: must be a number, got null'],
    [{ namespace: 7 }, 'namespace', 'namespace: must be a string, got 7'],
    [{ random: 0.5 }, 'random', 'random: must be a function returning a number in [0, 1)'],
    [{ log: console.log }, 'log', 'log: must have debug(), info(), warn() and error()'],
  ])('rejects the wrong type in %j with a clear message', (options, option, message) => {
    const error = thrownBy(() => createAgent({ redis: url, ...(options as object) } as AgentOptions))
    expect(error).toBeInstanceOf(InvalidAgentOptionError)
    expect(error).toMatchObject({ option, code: 'E_INVALID_AGENT_OPTION', message })
  })

  it("names the front door's options from heatsink., for every client and before any connection is used", () => {
    const cases: Array<[object, string]> = [
      [{ windowMS: 500 }, 'unknown option heatsink.windowMS — did you mean windowMs?'],
      [{ l1: { maxEntrys: 600 } }, 'unknown option heatsink.l1.maxEntrys — did you mean maxEntries?'],
      [{ redis: url }, 'unknown option heatsink.redis'],
      [{ l1: { maxEntries: 100 } }, 'heatsink.l1.maxEntries: must be an integer from 512 to 2048, got 100'],
      [{ windowMs: 'fast' }, 'heatsink.windowMs: must be a number, got "fast"'],
    ]
    for (const [heatsink, message] of cases) {
      const error = thrownBy(() => new HeatsinkRedis(url, { lazyConnect: true, heatsink: heatsink as never }))
      expect(error).toBeInstanceOf(InvalidAgentOptionError)
      expect((error as Error).message.startsWith(message)).toBe(true)
    }
    expect(
      thrownBy(() => new HeatsinkRedis(url, { lazyConnect: true, heatsink: true as never })),
    ).toMatchObject({
      message: 'heatsink: must be an object, got true',
    })
    expect(
      thrownBy(() => new HeatsinkCluster([url], { lazyConnect: true, heatsink: { windowMS: 1 } as never })),
    ).toMatchObject({
      option: 'heatsink.windowMS',
      suggestion: 'windowMs',
    })
  })

  it("rejects getOrLoad's unknown options and a signal that is not an AbortSignal", async () => {
    const agent = createAgent({ redis: url, agentId: 'options-test', readyTimeoutMs: 1 })
    try {
      await expect(agent.getOrLoad('k', () => 1, { ttlSecond: 60 } as never)).rejects.toMatchObject({
        option: 'getOrLoad.ttlSecond',
        message: 'unknown option getOrLoad.ttlSecond — did you mean ttlSeconds?',
      })
      await expect(
        agent.getOrLoad('k', () => 1, { ttlSeconds: 60, signal: {} as never }),
      ).rejects.toMatchObject({
        message: 'getOrLoad.signal: must be an AbortSignal',
      })
    } finally {
      await agent.close()
    }
  })

  it('refuses clients with a keyPrefix', () => {
    const client = new Redis(url, { lazyConnect: true, keyPrefix: 'app:' })
    expect(() => createAgent({ redis: client })).toThrow(/keyPrefix/)
    client.disconnect()
  })
})
