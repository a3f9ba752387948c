import { describe, expect, it } from 'vitest'
import { bufferView } from '../src/resp/buffer-view.js'

describe('bufferView', () => {
  it('is the Buffer subarray would make: same bytes, same memory, any offset into a pooled buffer', () => {
    // Buffer.from of a short string lands in Node's shared pool, at a non-zero offset of a larger ArrayBuffer.
    const pooled = Buffer.from('*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n')
    const view = bufferView(pooled, 8, 11)
    expect(Buffer.isBuffer(view)).toBe(true)
    expect(view.equals(pooled.subarray(8, 11))).toBe(true)
    expect(view.toString()).toBe('GET')
    expect(view.byteOffset).toBe(pooled.byteOffset + 8)
    pooled[8] = 0x67
    expect(view.toString()).toBe('gET')
    expect(bufferView(pooled, 5, 5).length).toBe(0)
  })
})
