import { describe, expect, it } from 'vitest'
import { keyIndexes, lookupCommand, writtenKeyIndexes } from '../src/index.js'

/** keyIndexes for a command line given as its words, the name first. */
function keysOf(line: readonly unknown[]): number[] {
  const [name, ...args] = line
  const spec = lookupCommand(String(name))
  if (spec === undefined) throw new Error(`unknown command ${String(name)}`)
  return keyIndexes(spec, args)
}

function writtenOf(line: readonly unknown[]): number[] {
  const [name, ...args] = line
  return writtenKeyIndexes(lookupCommand(String(name))!, args)
}

const words = (line: string) => line.split(' ')

describe('keyIndexes', () => {
  // Each line with the indexes (into the args after the name) of its keys.
  const cases: [string, number[]][] = [
    ['get k', [0]],
    ['set k v', [0]],
    ['set k v EX 10 GET', [0]],
    ['mset a 1 b 2 c 3', [0, 2, 4]],
    ['msetnx a 1 b 2', [0, 2]],
    ['mget a b c', [0, 1, 2]],
    ['del a b', [0, 1]],
    ['exists a', [0]],
    ['hset h f1 v1 f2 v2', [0]],
    ['blpop a b 0', [0, 1]],
    ['bzpopmin a b c 1.5', [0, 1, 2]],
    ['eval script 2 a b x y', [2, 3]],
    ['eval script 0 x', []],
    ['evalsha 0123abcd 1 a x', [2]],
    ['eval_ro script 1 a', [2]],
    ['fcall fn 2 a b x', [2, 3]],
    ['fcall_ro fn 1 a', [2]],
    ['xread COUNT 10 BLOCK 100 STREAMS s1 s2 0 0', [5, 6]],
    ['xread streams s1 $', [1]],
    ['xreadgroup GROUP g streams COUNT 1 STREAMS s1 >', [6]],
    ['sort k BY w_* GET o_* GET # LIMIT 0 10 STORE dst', [0, 11]],
    ['sort k STORE d1 STORE d2', [0, 4]],
    ['sort k LIMIT 0 store GET x', [0]],
    ['sort_ro k BY w_* GET o_*', [0]],
    ['migrate host 6379 k 0 5000', [2]],
    ['migrate host 6379  0 5000 COPY AUTH KEYS KEYS a b', [9, 10]],
    ['migrate host 6379  0 5000 AUTH2 user KEYS KEYS a', [9]],
    ['zunionstore dst 2 a b WEIGHTS 1 2', [0, 2, 3]],
    ['zinter 2 a b', [1, 2]],
    ['sintercard 3 a b c LIMIT 1', [1, 2, 3]],
    ['lmpop 2 a b LEFT', [1, 2]],
    ['blmpop 0 2 a b LEFT', [2, 3]],
    ['georadius k 0 0 10 km STORE dst', [0, 6]],
    ['georadius k 0 0 10 km WITHDIST', [0]],
    ['georadiusbymember k m 10 km STOREDIST dst', [0, 5]],
    ['lmove src dst LEFT RIGHT', [0, 1]],
    ['bitop AND dst a b', [1, 2, 3]],
    ['object ENCODING k', [1]],
    ['object HELP', []],
    ['memory USAGE k SAMPLES 5', [1]],
    ['memory STATS', []],
    ['xinfo STREAM s FULL', [1]],
    ['xgroup CREATE s g $ MKSTREAM', [1]],
    ['spublish channel message', []],
    ['ping', []],
    ['publish channel message', []],
  ]

  it.each(cases)('%s -> %j', (line, expected) => {
    expect(keysOf(words(line))).toEqual(expected)
  })

  it('reads numkeys and options from Buffers and numbers as well as strings', () => {
    expect(keysOf(['eval', 'script', Buffer.from('2'), 'a', 'b'])).toEqual([2, 3])
    expect(keysOf(['eval', 'script', 2, 'a', 'b'])).toEqual([2, 3])
    expect(keysOf(['xread', Buffer.from('streams'), 's', '0'])).toEqual([1])
    expect(keysOf(['migrate', 'h', 6379, Buffer.alloc(0), 0, 5000, Buffer.from('KEYS'), 'a'])).toEqual([6])
  })

  it('names no keys past the end of a malformed call, where Redis would reject it', () => {
    expect(keysOf(['eval', 'script', '5', 'a'])).toEqual([2])
    expect(keysOf(['eval', 'script', '-1', 'a'])).toEqual([])
    expect(keysOf(['eval', 'script', '0x1', 'a'])).toEqual([])
    expect(keysOf(['get'])).toEqual([])
    expect(keysOf(['xread', 'COUNT', '1'])).toEqual([])
  })
})

describe('writtenKeyIndexes', () => {
  const cases: [string, number[]][] = [
    ['set k v', [0]],
    ['get k', []],
    ['del a b', [0, 1]],
    ['mset a 1 b 2', [0, 2]],
    ['sort k BY w_* STORE dst', [4]],
    ['sort k BY w_*', []],
    ['lmove src dst LEFT RIGHT', [0, 1]],
    ['rpoplpush src dst', [0, 1]],
    ['smove src dst member', [0, 1]],
    ['copy src dst REPLACE', [1]],
    ['bitop OR dst a b', [1]],
    ['sinterstore dst a b', [0]],
    ['zunionstore dst 2 a b', [0]],
    ['zrangestore dst src 0 -1', [0]],
    ['geosearchstore dst src FROMMEMBER m BYRADIUS 1 km', [0]],
    ['georadius k 0 0 10 km STORE dst', [6]],
    ['georadius k 0 0 10 km', []],
    ['pfmerge dst a b', [0]],
    ['migrate host 6379 k 0 5000', [2]],
    ['migrate host 6379 k 0 5000 COPY', []],
    ['eval script 2 a b', [2, 3]],
    ['eval_ro script 2 a b', []],
    ['publish channel message', []],
    ['flushall', []],
  ]

  it.each(cases)('%s -> %j', (line, expected) => {
    expect(writtenOf(words(line))).toEqual(expected)
  })
})
