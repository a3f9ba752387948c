import { describe, expect, it } from 'vitest'
import { COMMAND_DATA } from '../src/command-data.js'
import { allCommands, CACHEABLE_COMMANDS, isBlocking, lookupCommand } from '../src/index.js'
import { KEY_FINDERS } from '../src/key-finders.js'
import { spec } from './known-spec.js'

describe('lookupCommand', () => {
  it('finds a command whatever its case, and gives the same spec object each time', () => {
    expect(spec('get').name).toBe('get')
    expect(lookupCommand('GET')).toBe(spec('get'))
    expect(lookupCommand('ZRangeByScore')).toBe(spec('zrangebyscore'))
  })

  it('answers undefined for a command it does not know', () => {
    expect(lookupCommand('nosuchcommand')).toBeUndefined()
    expect(lookupCommand('')).toBeUndefined()
    // A subcommand is an argument of its container, not a command of its own.
    expect(lookupCommand('config|get')).toBeUndefined()
  })

  it('hands out frozen specs, since every caller shares them', () => {
    expect(Object.isFrozen(spec('set'))).toBe(true)
  })

  it('knows every command Redis 7.0 has, and WAITAOF from 7.2', () => {
    expect([...allCommands()].length).toBeGreaterThanOrEqual(240)
    for (const name of ['getdel', 'lmpop', 'sintercard', 'fcall_ro', 'spublish', 'waitaof']) {
      expect(lookupCommand(name), name).toBeDefined()
    }
  })
})

describe('access', () => {
  it.each([
    ['set', 'write'],
    ['get', 'read'],
    ['ping', 'none'],
    ['publish', 'none'],
    ['spublish', 'none'],
    ['client', 'none'],
    ['info', 'none'],
    ['watch', 'none'],
    // 'readonly' but naming no key
    ['keys', 'none'],
    ['scan', 'none'],
    ['dbsize', 'none'],
    // the flags say neither read nor write; a script may write
    ['eval', 'write'],
    ['evalsha', 'write'],
    ['fcall', 'write'],
    ['eval_ro', 'read'],
    ['fcall_ro', 'read'],
    ['sort', 'write'],
    ['sort_ro', 'read'],
    ['xread', 'read'],
    ['xreadgroup', 'write'],
    ['object', 'read'],
    ['memory', 'read'],
    ['xinfo', 'read'],
    ['xgroup', 'write'],
    ['flushall', 'write'],
  ] as const)('%s is %s', (name, access) => {
    expect(spec(name).access).toBe(access)
  })
})

describe('flags', () => {
  it('marks the blocking commands, and XREAD only when called with BLOCK', () => {
    for (const name of [
      'blpop',
      'brpop',
      'blmove',
      'brpoplpush',
      'bzpopmin',
      'bzpopmax',
      'bzmpop',
      'blmpop',
    ]) {
      expect(spec(name).blocking, name).toBe(true)
    }
    expect(spec('wait').blocking).toBe(true)
    expect(spec('waitaof').blocking).toBe(true)
    expect(isBlocking(spec('blpop'), ['a', '0'])).toBe(true)
    expect(spec('xread').blocking).toBe(false)
    expect(isBlocking(spec('xread'), ['COUNT', '1', 'STREAMS', 's', '0'])).toBe(false)
    expect(isBlocking(spec('xread'), ['count', '1', 'block', '0', 'STREAMS', 's', '$'])).toBe(true)
    expect(isBlocking(spec('xreadgroup'), ['GROUP', 'g', 'c', 'BLOCK', '5', 'STREAMS', 's', '>'])).toBe(true)
    // a consumer called "block" and a stream called "BLOCK" are not the option
    expect(isBlocking(spec('xreadgroup'), ['GROUP', 'g', 'block', 'STREAMS', 'BLOCK', '>'])).toBe(false)
    expect(isBlocking(spec('get'), ['k'])).toBe(false)
  })

  it('marks publish/subscribe, transactions, administration and script refusal', () => {
    for (const name of [
      'subscribe',
      'psubscribe',
      'ssubscribe',
      'unsubscribe',
      'publish',
      'spublish',
      'pubsub',
    ]) {
      expect(spec(name).pubsub, name).toBe(true)
    }
    expect(spec('get').pubsub).toBe(false)
    for (const name of ['multi', 'exec', 'discard', 'watch', 'unwatch'])
      expect(spec(name).transaction).toBe(true)
    expect(spec('set').transaction).toBe(false)
    for (const name of ['config', 'acl', 'debug', 'monitor', 'shutdown', 'slowlog']) {
      expect(spec(name).admin, name).toBe(true)
    }
    expect(spec('client').admin).toBe(false)
    expect(spec('cluster').admin).toBe(false)
    for (const name of ['eval', 'multi', 'subscribe', 'script', 'function', 'client']) {
      expect(spec(name).noScript, name).toBe(true)
    }
    expect(spec('get').noScript).toBe(false)
  })
})

describe('singleKey', () => {
  it('is the fixed position of the one key, or -1', () => {
    expect(spec('get').singleKey).toBe(0)
    expect(spec('hset').singleKey).toBe(0)
    expect(spec('pfdebug').singleKey).toBe(1)
    for (const name of 'mget exists del eval sort zunionstore object ping spublish'.split(' ')) {
      expect(spec(name).singleKey, name).toBe(-1)
    }
  })
})

describe('cacheable', () => {
  it('allows only reads that depend on the one key value alone', () => {
    for (const name of ['get', 'hgetall', 'lrange', 'smembers', 'zrangebyscore', 'exists', 'bitcount']) {
      expect(spec(name).cacheable, name).toBe(true)
    }
    // random, clock-bound, bookkeeping, cursors, other keys' values, blocking, several keys, writes
    const never = 'ttl pttl expiretime srandmember spop hrandfield zrandmember randomkey object memory dump'
    const alsoNever = 'debug scan hscan sort sort_ro blpop mget set getex getdel'
    for (const name of `${never} ${alsoNever}`.split(' ')) expect(spec(name).cacheable, name).toBe(false)
  })

  it('holds only known read commands', () => {
    for (const name of CACHEABLE_COMMANDS) {
      const cacheable = spec(name)
      expect(cacheable.access, name).toBe('read')
      expect(isBlocking(cacheable, []), name).toBe(false)
      expect(cacheable.cacheable).toBe(true)
    }
  })
})

describe('the data behind the table', () => {
  it('has a key finder for every command whose keys move with its arguments', () => {
    for (const [name, data] of COMMAND_DATA) {
      if (data.flags.includes('movablekeys')) expect(KEY_FINDERS.has(name), name).toBe(true)
    }
  })
})
