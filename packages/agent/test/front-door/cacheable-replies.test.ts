import { isDeepStrictEqual } from 'node:util'
import { CACHEABLE_COMMANDS } from '@heatsink/commands'
import { createNames } from '@heatsink/protocol'
import {
  CACHEABLE_CALLS,
  CACHEABLE_KEYS,
  type CacheableCall,
  useTestRedis,
  writeCacheableKeys,
} from '@heatsink/test'
import { Redis as IORedis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from '../../src/index.js'
import { publishRegistry } from '../../src/testing.js'
import { waitFor } from '../support/helpers.js'

const redis = useTestRedis()
const open: Array<Redis | IORedis> = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.quit().catch(() => {})))
})

type Method = (...args: string[]) => Promise<unknown>
const method = (client: Redis | IORedis, name: string): Method =>
  (client as unknown as Record<string, Method>)[name]?.bind(client) as Method

// Equal as a caller sees it: the same values and types (Node's strict deep equality: vitest's toStrictEqual
// compares objects' `constructor` properties, which HGETALL's objects hold as a field), own keys in the same order.
function expectSame(actual: unknown, expected: unknown, what: string): void {
  expect(actual, what).toEqual(expected)
  expect(isDeepStrictEqual(actual, expected), what).toBe(true)
  if (
    expected !== null &&
    typeof expected === 'object' &&
    !Array.isArray(expected) &&
    !Buffer.isBuffer(expected)
  ) {
    expect(Object.keys(actual as object), what).toEqual(Object.keys(expected))
  }
}

async function commandCalls(admin: IORedis): Promise<string> {
  const info = await admin.info('commandstats')
  // Every cacheable command's count (HELLO, INFO and the like are the test's own).
  return info
    .split('\n')
    .filter((line) => CACHEABLE_COMMANDS.has(/^cmdstat_([a-z]+):/.exec(line)?.[1] ?? ''))
    .join('\n')
}

describe('every cacheable command through the ioredis drop-in', () => {
  it('has a sample call here', () => {
    const sampled = new Set(CACHEABLE_CALLS.map((call) => call.command))
    expect([...CACHEABLE_COMMANDS].filter((command) => !sampled.has(command))).toEqual([])
  })

  it('answers from L1 what plain ioredis answers: strings, Buffers and in a pipeline, each caller its own copy', async () => {
    const { namespace, url } = redis()
    const prefix = `${namespace}:`
    const heatsink = { namespace, l1: { maxTtlMs: 60_000 } }
    const client = new Redis(url, { heatsink })
    const plain = new IORedis(url)
    open.push(client, plain)
    await client.heatsink.ready()
    await writeCacheableKeys(plain, prefix)
    const keys = CACHEABLE_KEYS.map((key) => prefix + key)
    await publishRegistry(plain, createNames(namespace), ...keys.map((key) => ({ key })))
    await waitFor(
      () => keys.every((key) => client.heatsink.mitigation(key) === 'local_cache'),
      'the promotion',
    )

    const argsOf = (call: CacheableCall) => [prefix + call.key, ...call.args]
    const expected = []
    for (const call of CACHEABLE_CALLS) {
      expected.push({
        strings: await method(plain, call.command)(...argsOf(call)),
        buffers: await method(plain, `${call.command}Buffer`)(...argsOf(call)),
      })
    }
    // The first read of each call fills L1 (through the same method: its reply is Redis's, passed on).
    for (const [i, call] of CACHEABLE_CALLS.entries()) {
      const what = `${call.command} ${call.key} ${call.args.join(' ')}`
      expectSame(
        await method(client, call.command)(...argsOf(call)),
        expected[i]?.strings,
        `${what} (first read)`,
      )
    }

    const callsBefore = await commandCalls(plain)
    const hitsBefore = client.heatsink.stats().l1Hits
    for (const [i, call] of CACHEABLE_CALLS.entries()) {
      const what = `${call.command} ${call.key} ${call.args.join(' ')}`
      const strings = await method(client, call.command)(...argsOf(call))
      expectSame(strings, expected[i]?.strings, what)
      expectSame(
        await method(client, `${call.command}Buffer`)(...argsOf(call)),
        expected[i]?.buffers,
        `${what} (Buffer)`,
      )
      // A caller may change what it was given; the next caller still gets the reply.
      if (Array.isArray(strings)) strings.push('changed')
      else if (strings !== null && typeof strings === 'object')
        (strings as Record<string, unknown>).a = 'changed'
      expectSame(await method(client, call.command)(...argsOf(call)), expected[i]?.strings, `${what} (again)`)
    }
    const pipeline = client.pipeline()
    for (const call of CACHEABLE_CALLS)
      (pipeline as unknown as Record<string, Method>)[call.command]?.(...argsOf(call))
    const piped = (await pipeline.exec())?.map(([error, reply]) => error ?? reply)
    expectSame(
      piped,
      expected.map((reply) => reply.strings),
      'the pipeline',
    )
    // None of it reached Redis: three reads per call and the pipeline's, all from L1.
    expect(await commandCalls(plain)).toBe(callsBefore)
    expect(client.heatsink.stats().l1Hits - hitsBefore).toBe(4 * CACHEABLE_CALLS.length)
  })
})
