import { createNames } from '@heatsink/protocol'
import { type FuzzBatch, fuzzBatches, useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from '../../src/index.js'
import { publishRegistry } from '../../src/testing.js'
import { waitFor } from '../support/helpers.js'
import { stateOf } from '../support/split-comparison.js'

const redis = useTestRedis()
const open: Redis[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.quit().catch(() => {})))
})

const KEYS = 8
const BATCHES = 120

describe('split keys under mixed command sequences', () => {
  it.each([1, 2, 3])(
    'seed %i: pipelines and transactions answer as on unsplit keys, binary values included',
    async (seed) => {
      const { namespace, url } = redis()
      const plain = redis().client()
      const r = new Redis(url, { heatsink: { namespace } })
      open.push(r)
      await r.heatsink.ready()
      const split = (key: string) => `${namespace}:s:${key}`
      const unsplit = (key: string) => `${namespace}:u:${key}`
      const names = Array.from({ length: KEYS }, (_, i) => `k${i}`)
      // Half the keys start as counters that held a value before they were split.
      for (const name of names.slice(0, KEYS / 2)) {
        await plain.set(split(name), '40')
        await plain.set(unsplit(name), '40')
      }
      await publishRegistry(
        plain,
        createNames(namespace),
        ...names.map((name) => ({ key: split(name), mitigation: 'split' as const, splitFactor: 4 })),
      )
      await waitFor(() => r.heatsink.mitigation(split(`k${KEYS - 1}`)) === 'split', 'the registration')
      await new Promise((resolve) => setTimeout(resolve, 2100))

      const differences: string[] = []
      for (const [index, batch] of fuzzBatches(seed, KEYS, BATCHES).entries()) {
        const got = await run(r, batch, split)
        const want = await run(r, batch, unsplit)
        try {
          expect(got).toEqual(want)
        } catch {
          differences.push(`batch ${index} ${describeBatch(batch)}: ${show(got)} != ${show(want)}`)
        }
      }
      for (const name of names) {
        const after = await stateOf(r, split(name))
        const expected = await stateOf(r, unsplit(name))
        if (JSON.stringify(after) !== JSON.stringify(expected))
          differences.push(`state of ${name}: ${show(after)} != ${show(expected)}`)
      }
      expect(differences).toEqual([])
    },
    60_000,
  )
})

async function run(client: Redis, batch: FuzzBatch, keyOf: (name: string) => string): Promise<unknown[]> {
  const pipeline = batch.transaction ? client.multi() : client.pipeline()
  for (const [command, key, ...rest] of batch.commands)
    pipeline.callBuffer(command as string, keyOf(key as string), ...rest)
  const results = (await pipeline.exec()) ?? []
  return results.map(([error, reply]) => (error === null ? reply : { error: error.message }))
}

function describeBatch(batch: FuzzBatch): string {
  const commands = batch.commands.map((command) =>
    command.map((arg) => (Buffer.isBuffer(arg) ? `<${arg.toString('hex')}>` : arg)).join(' '),
  )
  return `${batch.transaction ? 'MULTI ' : ''}[${commands.join('; ')}]`
}

function show(value: unknown): string {
  return JSON.stringify(value, (_key, item) =>
    item?.type === 'Buffer' ? `<${Buffer.from(item.data).toString('hex')}>` : item,
  )
}
