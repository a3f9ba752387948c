import { describe, expect, it } from 'vitest'
import { allCommands, CACHEABLE_COMMANDS, CACHEABLE_REPLIES, freshReply, ioredisReply } from '../src/index.js'
import { spec } from './known-spec.js'

describe('the table of cacheable replies', () => {
  it('gives every cacheable command, and only those, a reply shape', () => {
    for (const command of allCommands()) {
      expect(command.reply, command.name).toBe(CACHEABLE_REPLIES.get(command.name))
      expect(command.cacheable, command.name).toBe(command.reply !== undefined)
    }
    for (const [name, shape] of CACHEABLE_REPLIES) {
      expect(spec(name).cacheable, name).toBe(true)
      expect(shape, name).toBeTypeOf('string')
    }
    expect([...CACHEABLE_COMMANDS]).toEqual([...CACHEABLE_REPLIES.keys()])
  })

  it('names the shapes the front doors tell apart', () => {
    const shapes = {
      get: 'bulk',
      type: 'status',
      hgetall: 'pairs',
      smembers: 'members',
      zscore: 'score',
      zmscore: 'scores',
      zrangebyscore: 'range',
      zrevrank: 'rank',
      set: undefined,
    }
    for (const [name, shape] of Object.entries(shapes)) expect(spec(name).reply, name).toBe(shape)
  })
})

describe('ioredisReply', () => {
  it('decodes Buffers as UTF-8 at any depth and leaves integers and nils alone', () => {
    expect(ioredisReply(spec('get'), Buffer.from('héllo'))).toBe('héllo')
    expect(ioredisReply(spec('get'), null)).toBeNull()
    expect(ioredisReply(spec('strlen'), 6)).toBe(6)
    expect(ioredisReply(spec('hmget'), [Buffer.from('a'), null])).toEqual(['a', null])
    expect(ioredisReply(spec('zrank'), [2, Buffer.from('1.5')])).toEqual([2, '1.5'])
  })

  it('makes HGETALL an object with every field its own property, as ioredis does', () => {
    const pairs = ['__proto__', 'p', 'constructor', 'c', '7', 'n', 'a', 'x'].map((item) => Buffer.from(item))
    const object = ioredisReply(spec('hgetall'), pairs) as Record<string, unknown>
    expect(Object.getPrototypeOf(object)).toBe(Object.prototype)
    expect(Object.hasOwn(object, '__proto__')).toBe(true)
    expect(Object.entries(object)).toEqual([
      ['7', 'n'],
      ['__proto__', 'p'],
      ['constructor', 'c'],
      ['a', 'x'],
    ])
    // Only HGETALL's pairs: HKEYS of the same hash stays a list.
    expect(ioredisReply(spec('hkeys'), pairs.slice(0, 2))).toEqual(['__proto__', 'p'])
  })

  it('is handed to each caller as a copy of its own, with nested arrays copied too', () => {
    const decoded = ioredisReply(spec('zrank'), [1, [Buffer.from('x')]]) as unknown[]
    const copy = freshReply(decoded) as unknown[]
    expect(copy).toEqual(decoded)
    expect(copy).not.toBe(decoded)
    expect(copy[1]).not.toBe(decoded[1])
    const object = ioredisReply(spec('hgetall'), [Buffer.from('f'), Buffer.from('v')])
    expect(freshReply(object)).not.toBe(object)
    expect(freshReply(object)).toEqual({ f: 'v' })
  })
})
