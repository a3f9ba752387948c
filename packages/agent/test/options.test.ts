import type { Codec } from '@heatsink/stampede'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { createAgent, InvalidAgentOptionError } from '../src/index.js'
import { resolveOptions } from '../src/options.js'

const url = 'redis://127.0.0.1:1'

describe('options', () => {
  it('has the documented defaults', () => {
    const options = resolveOptions({ redis: url })
    expect(options).toMatchObject({
      windowMs: 1000,
      l1: { maxEntries: 1024, ttlFraction: 0.2, maxTtlMs: 5000 },
      fastReportFloor: 100,
      maxPartialReportsPerWindow: 8,
      registryCheckMs: 2000,
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
    [{ windowMs: 5 }, 'windowMs', /at least 10/],
    [{ namespace: 'has space' }, 'namespace', /invalid namespace/],
    [{ agentId: '' }, 'agentId', /1 to 128 characters/],
    [{ fastReportFloor: 0.5 }, 'fastReportFloor', /integer/],
    [{ stampede: { leaseMs: 0 } }, 'stampede.leaseMs', /at least 1/],
    [{ stampede: { maxWaitMs: 1.5 } }, 'stampede.maxWaitMs', /integer/],
    [
      { codec: { encode: JSON.stringify } as unknown as Codec },
      'codec',
      /encode\(value\) and decode\(text\)/,
    ],
  ])('rejects %j naming %s', (options, option, message) => {
    const error = (() => {
      try {
        createAgent({ redis: url, ...options })
      } catch (caught) {
        return caught
      }
    })()
    expect(error).toBeInstanceOf(InvalidAgentOptionError)
    expect(error).toMatchObject({ option, code: 'E_INVALID_AGENT_OPTION' })
    expect((error as Error).message).toMatch(message)
    expect((error as Error).message.startsWith(`${option}: `)).toBe(true)
  })

  it('refuses clients with a keyPrefix', () => {
    const client = new Redis(url, { lazyConnect: true, keyPrefix: 'app:' })
    expect(() => createAgent({ redis: client })).toThrow(/keyPrefix/)
    client.disconnect()
  })
})
