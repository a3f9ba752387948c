import { describe, expect, it } from 'vitest'
import { ownedReply, retainedBytes } from '../src/l1/retained-bytes.js'

describe('what an L1 reply keeps alive', () => {
  it('copies a Buffer that is a view of a larger chunk into memory of its own, and leaves the rest as it is', () => {
    const chunk = Buffer.from('$3\r\nabc\r\n$2\r\nxy\r\n')
    const view = chunk.subarray(4, 7)
    const owned = ownedReply(view) as Buffer
    expect(owned.toString()).toBe('abc')
    expect(owned.buffer.byteLength).toBe(3)
    chunk.fill(0)
    expect(owned.toString()).toBe('abc')

    const own = Buffer.allocUnsafeSlow(2)
    own.write('xy')
    expect(ownedReply(own)).toBe(own)
    const array = [own, 7, null]
    expect(ownedReply(array)).toBe(array)
  })

  it('copies an array only where it held a view, nested too', () => {
    const chunk = Buffer.from('field-value')
    const own = Buffer.allocUnsafeSlow(1)
    const nested = [own, [chunk.subarray(0, 5), 1]]
    const owned = ownedReply(nested) as [Buffer, [Buffer, number]]
    expect(owned).not.toBe(nested)
    expect(owned[0]).toBe(own)
    expect(owned[1][0].toString()).toBe('field')
    expect(owned[1][0].buffer.byteLength).toBe(5)
    expect(owned[1][1]).toBe(1)
  })

  it('estimates at least the bytes held, growing with the contents', () => {
    const value = Buffer.alloc(10_000)
    expect(retainedBytes(value)).toBeGreaterThanOrEqual(10_000)
    expect(retainedBytes('x'.repeat(1000))).toBeGreaterThanOrEqual(2000)
    const hash = Array.from({ length: 40 }, (_, i) => Buffer.alloc(100, i))
    expect(retainedBytes(hash)).toBeGreaterThanOrEqual(4000)
    expect(retainedBytes(hash)).toBeLessThan(retainedBytes([...hash, ...hash]))
  })
})
