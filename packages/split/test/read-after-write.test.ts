import { describe, expect, it } from 'vitest'
import { ReadAfterWrite } from '../src/read-after-write.js'
import { deferred } from './support/deferred.js'

describe('ReadAfterWrite', () => {
  it('joins writers to a read queued after theirs, and never to one already in flight', async () => {
    const shared = new ReadAfterWrite<number>()
    const reads: Array<ReturnType<typeof deferred<number>>> = []
    const start = () => {
      const read = deferred<number>()
      reads.push(read)
      return read.promise
    }
    const first = shared.read('k', start)
    const second = shared.read('k', start)
    await Promise.resolve()
    expect(reads).toHaveLength(1)
    // A write that ends while the first read is in flight needs a later read; later writers join it.
    const third = shared.read('k', start)
    const fourth = shared.read('k', start)
    expect(reads).toHaveLength(1)
    reads[0]!.resolve(1)
    expect(await first).toBe(1)
    expect(await second).toBe(1)
    await Promise.resolve()
    expect(reads).toHaveLength(2)
    reads[1]!.resolve(2)
    expect(await third).toBe(2)
    expect(await fourth).toBe(2)
    // Other ids never share.
    const other = shared.read('other', start)
    await Promise.resolve()
    reads[2]!.resolve(3)
    expect(await other).toBe(3)
  })
})
