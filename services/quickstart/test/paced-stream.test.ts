import { describe, expect, it } from 'vitest'
import { PacedStream } from '../src/paced-stream.js'

describe('PacedStream', () => {
  it('sends nothing before its start, then the rate over elapsed time however late the ticks come', () => {
    const stream = new PacedStream(1_500, 2)
    expect(stream.due(1_990)).toBe(0)
    let sent = 0
    // Ticks meant for every 10 ms that arrive every 12 ms: the count still follows the clock.
    for (let at = 2_000; at <= 12_000; at += 12) sent += stream.due(at)
    expect(sent).toBe(Math.floor((11_996 - 2_000) * 1.5))
  })

  it('sends at most 100 ms of backlog after a stall, not one burst of everything owed', () => {
    const stream = new PacedStream(1_000, 0)
    expect(stream.due(1_000)).toBe(100)
    expect(stream.due(1_010)).toBe(10)
    expect(stream.due(3_010)).toBe(100)
  })
})
