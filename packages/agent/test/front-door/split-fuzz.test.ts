import { compareFuzz, useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from '../../src/index.js'
import { splitRegistration } from '../support/split-registration.js'

const redis = useTestRedis()
const open: Redis[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.quit().catch(() => {})))
})

describe('split keys under mixed command sequences', () => {
  it.each([1, 2, 3])(
    'seed %i: pipelines and transactions answer as on unsplit keys, binary values included',
    async (seed) => {
      const { namespace, url } = redis()
      const plain = redis().client()
      const r = new Redis(url, { heatsink: { namespace } })
      open.push(r)
      await r.heatsink.ready()
      const result = await compareFuzz(
        {
          client: r,
          plain,
          splitName: (name) => `${namespace}:s:${name}`,
          unsplitName: (name) => `${namespace}:u:${name}`,
          split: splitRegistration(plain, namespace, (key) => r.heatsink.mitigation(key)).split,
        },
        seed,
        8,
        120,
      )
      expect(result.differences).toEqual([])
    },
    60_000,
  )
})
