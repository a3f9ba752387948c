import { useTestRedis } from '@heatsink/test'
import { describe, expect, it } from 'vitest'
import { keyIndexes, lookupCommand } from '../src/index.js'

const t = useTestRedis({ scope: 'all' })

// Command lines as words. `~name` is a name (key, channel, pattern) placed under the test's namespace, so
// nothing outside it could be touched; `""` is an empty argument. COMMAND GETKEYS reads no key, but the lines
// stay in the namespace anyway.
const LINES = [
  'get ~k',
  'set ~k v EX 10 GET',
  'getex ~k PERSIST',
  'mset ~a 1 ~b 2 ~c 3',
  'mget ~a ~b ~c',
  'del ~a ~b',
  'exists ~a ~b',
  'touch ~a ~b',
  'hset ~h f1 v1 f2 v2',
  'xadd ~s * f v',
  'blpop ~a ~b 0',
  'bzpopmin ~a ~b 0',
  'brpoplpush ~a ~b 0',
  'lmove ~src ~dst LEFT RIGHT',
  'rename ~a ~b',
  'copy ~src ~dst',
  'lcs ~a ~b',
  'eval script 2 ~a ~b x',
  'evalsha 0123456789abcdef0123456789abcdef01234567 1 ~a x',
  'eval_ro script 1 ~a',
  'fcall fn 2 ~a ~b x',
  'fcall_ro fn 1 ~a',
  'xread COUNT 10 BLOCK 100 STREAMS ~s1 ~s2 0 0',
  'xreadgroup GROUP g c COUNT 1 BLOCK 10 NOACK STREAMS ~s1 ~s2 > >',
  'sort ~k BY ~w_* GET ~o_* GET # LIMIT 0 10 STORE ~dst',
  'sort ~k STORE ~d1 STORE ~d2',
  'sort_ro ~k BY ~w_* GET ~o_*',
  'migrate host 6379 ~k 0 5000',
  'migrate host 6379 "" 0 5000 COPY REPLACE AUTH pw KEYS ~a ~b',
  'zunionstore ~dst 2 ~a ~b WEIGHTS 1 2',
  'zinterstore ~dst 2 ~a ~b',
  'zdiff 2 ~a ~b',
  'zinter 2 ~a ~b',
  'zrangestore ~dst ~src 0 -1',
  'sintercard 2 ~a ~b LIMIT 1',
  'sinterstore ~dst ~a ~b',
  'lmpop 2 ~a ~b LEFT',
  'blmpop 0 2 ~a ~b LEFT',
  'zmpop 1 ~a MIN',
  'georadius ~k 0 0 10 km STORE ~dst',
  'georadiusbymember ~k m 10 km STOREDIST ~dst',
  'geosearchstore ~dst ~src FROMMEMBER m BYRADIUS 1 km',
  'bitop AND ~dst ~a ~b',
  'pfmerge ~dst ~a ~b',
  'object ENCODING ~k',
  'memory USAGE ~k',
  'xinfo STREAM ~s',
  'xgroup CREATE ~s g $ MKSTREAM',
  'watch ~a ~b',
  'spublish ~ch message',
  'publish ~ch message',
  'subscribe ~ch1 ~ch2',
  'ping hello',
]

function wordsOf(line: string, namespace: string): string[] {
  return line.split(' ').map((word) => {
    if (word === '""') return ''
    return word.startsWith('~') ? `${namespace}:${word.slice(1)}` : word
  })
}

describe('keyIndexes against Redis', () => {
  it('names the same keys, in the same order, as COMMAND GETKEYS', async () => {
    const client = t().client()
    const mismatches: string[] = []
    for (const line of LINES) {
      const [name, ...args] = wordsOf(line, t().namespace)
      const ours = keyIndexes(lookupCommand(name!)!, args).map((index) => args[index])
      const theirs = await client.call('COMMAND', 'GETKEYS', name!, ...args).then(
        (keys) => keys as string[],
        (error: Error) => {
          // Redis answers a command that names no key with an error, not an empty list.
          if (error.message.includes('no key arguments')) return []
          throw new Error(`${line}: ${error.message}`)
        },
      )
      if (JSON.stringify(ours) !== JSON.stringify(theirs)) {
        mismatches.push(`${line}: ours ${JSON.stringify(ours)}, Redis ${JSON.stringify(theirs)}`)
      }
    }
    expect(mismatches).toEqual([])
    expect(LINES.length).toBeGreaterThanOrEqual(40)
  })
})
