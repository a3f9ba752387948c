import { expect, it } from 'vitest'
import { describeTargets } from './support/targets.js'

// On a standalone Redis a counter's INCRBY and GET can each be one command sent at once (counterInOrder,
// counterSnapshotInOrder): calls made one after another then run in that order.
describeTargets(
  'split counter commands sent in order',
  (target) => {
    it('answers calls made one after another with the value after each write, in their order', async () => {
      const t = target()
      const key = `${t.namespace}:hits`
      const plain = await t.client()
      await plain.set(key, '100')
      const splitter = await t.splitter('a')
      const replies = Array.from({ length: 200 }, (_, i) =>
        i % 10 === 9
          ? splitter.counterSnapshotInOrder(key, 8)
          : splitter.counterInOrder(key, 8, i % 2 === 0 ? '2' : '-1'),
      )
      let expected = 100n
      const wanted = Array.from({ length: 200 }, (_, i) => {
        if (i % 10 !== 9) expected += i % 2 === 0 ? 2n : -1n
        return expected
      })
      expect(await Promise.all(replies)).toEqual(wanted)
      expect(await splitter.get(key, 8)).toBe(String(expected))
      // The increments went to shards.
      expect(await plain.get(key)).toBe('100')
    })
  },
  ['redis'],
)
