import { allCommands } from '@heatsink/commands'
import { createNames } from '@heatsink/protocol'
import { useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from '../../src/index.js'
import { publishRegistry } from '../../src/testing.js'
import { waitFor } from '../support/helpers.js'
import { COMMAND_LINES, NOT_COMPARED, RANDOM_ORDER } from '../support/split-command-lines.js'
import {
  CONTENTS,
  type Content,
  fillOthers,
  outcome,
  resolve,
  type Side,
  sideKeys,
  sorted,
  stateOf,
} from '../support/split-comparison.js'

const redis = useTestRedis()
const open: Redis[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.quit().catch(() => {})))
})

const GROUPS = new Set(['string', 'generic', 'set', 'sorted-set'])

describe('a split key answers every command as the unsplit key does', () => {
  it('has a command line for every keyed command of the string, generic, set and sorted-set groups', async () => {
    const docs = (await redis().client().call('COMMAND', 'DOCS')) as unknown[]
    const known = new Set([...allCommands()].map((spec) => spec.name))
    const names: string[] = []
    for (let i = 0; i < docs.length; i += 2) {
      const fields = docs[i + 1] as unknown[]
      const group = fields[fields.indexOf('group') + 1] as string
      const name = String(docs[i]).toUpperCase()
      if (GROUPS.has(group) && known.has(name.toLowerCase())) names.push(name)
    }
    const covered = new Set(COMMAND_LINES.map((line) => line[0]))
    const missing = names.filter((name) => !covered.has(name) && !NOT_COMPARED.has(name))
    expect(missing).toEqual([])
    expect(names.length).toBeGreaterThan(100)
  })

  it('through the ioredis front door: the same reply, byte for byte, and the same state after', async () => {
    const { namespace, url } = redis()
    const plain = redis().client()
    const r = new Redis(url, { heatsink: { namespace } })
    open.push(r)
    await r.heatsink.ready()
    await plain.set(`${namespace}:payload-source`, 'restored')
    const payload = (await plain.dumpBuffer(`${namespace}:payload-source`)) as Buffer

    const contents = Object.keys(CONTENTS) as Content[]
    const pairs: Array<{ line: readonly string[]; content: Content; split: Side; unsplit: Side }> = []
    for (const [i, line] of COMMAND_LINES.entries()) {
      for (const content of contents) {
        const split = sideKeys(`${namespace}:s${i}:${content}`)
        const unsplit = sideKeys(`${namespace}:u${i}:${content}`)
        pairs.push({ line, content, split, unsplit })
        for (const side of [split, unsplit]) {
          await CONTENTS[content](plain, side.K)
          await fillOthers(plain, side)
        }
      }
    }
    await publishRegistry(
      plain,
      createNames(namespace),
      ...pairs.map(({ split }) => ({ key: split.K, mitigation: 'split' as const, splitFactor: 4 })),
    )
    const last = pairs.at(-1)?.split.K as string
    await waitFor(() => r.heatsink.mitigation(last) === 'split', 'the split registration')
    // For 2 s after a promotion writes stay on the key itself, until every agent has heard of the split.
    await new Promise((resolve) => setTimeout(resolve, 2100))

    const differences: string[] = []
    let spread = 0
    for (const { line, content, split, unsplit } of pairs) {
      if (content === 'counter') {
        // Two increments over the shards first, so that the split key's value is spread when the command runs.
        for (const side of [split, unsplit]) for (let i = 0; i < 2; i++) await r.incr(side.K)
        if ((await plain.get(split.K)) === '40') spread++
      }
      const order = RANDOM_ORDER.has(line[0] as string) ? sorted : (reply: unknown) => reply
      // BZPOPMIN and the like name the key they popped from: each side's own name.
      const got = order(named(await outcome(r, resolve(line, split, payload)), split.K))
      const want = order(named(await outcome(r, resolve(line, unsplit, payload)), unsplit.K))
      const label = `${line.join(' ')} on ${content}`
      if (!isDeepEqual(got, want)) differences.push(`${label}: ${show(got)} != ${show(want)}`)
      for (const name of ['K', 'S', 'Z', 'T', 'D'] as const) {
        const after = await stateOf(r, split[name])
        const expected = await stateOf(r, unsplit[name])
        if (!isDeepEqual(after, expected))
          differences.push(`${label}, state of ${name}: ${show(after)} != ${show(expected)}`)
      }
    }
    expect(differences).toEqual([])
    // The counters really were split: their increments went to shards, not to the key itself.
    expect(spread).toBe(COMMAND_LINES.length)
  }, 120_000)
})

function named(reply: unknown, key: string): unknown {
  if (Array.isArray(reply)) return reply.map((item) => named(item, key))
  return Buffer.isBuffer(reply) && reply.equals(Buffer.from(key)) ? 'K' : reply
}

function isDeepEqual(a: unknown, b: unknown): boolean {
  try {
    expect(a).toEqual(b)
    return true
  } catch {
    return false
  }
}

function show(value: unknown): string {
  return JSON.stringify(value, (_key, item) =>
    item?.type === 'Buffer' ? `<${Buffer.from(item.data).toString('hex')}>` : item,
  )
}
