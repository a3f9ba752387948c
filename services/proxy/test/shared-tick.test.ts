import { describe, expect, it } from 'vitest'
import { onSharedTick } from '../src/joined-writes.js'

describe('onSharedTick', () => {
  it('runs every flush in the order scheduled, after the current work, and those scheduled meanwhile', async () => {
    const ran: string[] = []
    onSharedTick(() => ran.push('a'))
    onSharedTick(() => {
      ran.push('b')
      // Scheduled while the flushes run: runs after the ones already due.
      onSharedTick(() => ran.push('d'))
    })
    onSharedTick(() => ran.push('c'))
    expect(ran).toEqual([])
    await new Promise<void>((resolve) => process.nextTick(resolve))
    expect(ran).toEqual(['a', 'b', 'c', 'd'])
    // A flush scheduled once the list has run is not forgotten.
    onSharedTick(() => ran.push('e'))
    await new Promise<void>((resolve) => process.nextTick(resolve))
    expect(ran).toEqual(['a', 'b', 'c', 'd', 'e'])
  })
})
