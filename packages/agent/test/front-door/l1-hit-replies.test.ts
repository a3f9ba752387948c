import { createNames } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
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

// Fields named like Object.prototype's, past a dozen (where V8 changes how it lays out an object), one numeric.
const FIELDS = ['__proto__', 'constructor', 'toString', '7', ...Array.from({ length: 20 }, (_, i) => `f${i}`)]

describe('an L1 hit through the ioredis front door', () => {
  it('answers what plain ioredis answers, with and without keyPrefix, and gives every caller its own copy', async () => {
    const { namespace, url } = redis()
    const prefix = `${namespace}:app:`
    const heatsink = { namespace, l1: { maxTtlMs: 60_000 } }
    const prefixed = new Redis(url, { keyPrefix: prefix, heatsink })
    const whole = new Redis(url, { heatsink })
    const plain = new IORedis(url, { keyPrefix: prefix })
    open.push(prefixed, whole, plain)
    await Promise.all([prefixed.heatsink.ready(), whole.heatsink.ready()])
    await plain.hset('hash', Object.fromEntries(FIELDS.map((field, i) => [field, `value ${i} ✓`])))
    await plain.rpush('list', 'a', 'b', 'c')
    await plain.set('text', 'héllo')
    const names = ['hash', 'list', 'text'].map((key) => prefix + key)
    await publishRegistry(plain, createNames(namespace), ...names.map((key) => ({ key })))
    await waitFor(
      () => names.every((key) => whole.heatsink.mitigation(key) === 'local_cache'),
      'the promotion',
    )
    // Promotion prefills each key's GET reply: the string's is stored (the hash's and the list's answer WRONGTYPE).
    await waitFor(() => whole.heatsink.stats().l1Entries === 1, 'the prefill of the string key')

    const expected = {
      hash: await plain.hgetall('hash'),
      list: await plain.lrange('list', 0, -1),
      text: await plain.get('text'),
    }
    expect(Object.keys(expected.hash)).toEqual(['7', ...FIELDS.filter((field) => field !== '7')])
    const hitsBefore = whole.heatsink.stats().l1Hits
    for (let round = 0; round < 3; round++) {
      for (const [client, key] of [
        [prefixed, (k: string) => k],
        [whole, (k: string) => prefix + k],
      ] as const) {
        const hash = await client.hgetall(key('hash'))
        expect(hash).toEqual(expected.hash)
        expect(Object.keys(hash)).toEqual(Object.keys(expected.hash))
        expect(Object.getPrototypeOf(hash)).toBe(Object.prototype)
        expect(Object.hasOwn(hash, '__proto__')).toBe(true)
        const list = await client.lrange(key('list'), 0, -1)
        expect(list).toEqual(expected.list)
        expect(await client.get(key('text'))).toBe(expected.text)
        const viaCallback = await new Promise((resolve, reject) =>
          client.get(key('text'), (error, value) => (error ? reject(error) : resolve(value))),
        )
        expect(viaCallback).toBe(expected.text)
        // A caller may change what it was given; the next caller still gets the reply.
        hash.f0 = 'changed'
        delete hash.f1
        list.push('d')
      }
    }
    // Four reads, by two clients, in three rounds: the first read of the hash and of the list fills L1, the
    // rest (the string's first included, prefilled) are hits (the one agent both clients share counts them).
    expect(whole.heatsink.stats().l1Hits - hitsBefore).toBe(2 * 4 * 3 - 2)
  })
})
