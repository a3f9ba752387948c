import { allCommands } from '@heatsink/commands'
import { COMMAND_LINES, compareCommandTable, MOST_UNSPREAD, NOT_COMPARED, useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from '../../src/index.js'
import { splitRegistration } from '../support/split-registration.js'

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
    const result = await compareCommandTable({
      client: r,
      plain,
      prefix: namespace,
      split: splitRegistration(plain, namespace, (key) => r.heatsink.mitigation(key)).split,
    })
    expect(result.differences).toEqual([])
    expect(result.unspread.length).toBeLessThanOrEqual(MOST_UNSPREAD)
  }, 120_000)
})
