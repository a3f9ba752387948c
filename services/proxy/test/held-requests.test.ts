import { describe, expect, it } from 'vitest'
import { HeldRequests } from '../src/backend/held-requests.js'
import type { ReplySink } from '../src/backend/reply-sink.js'

// A sink that records how it ended.
function sink(failures: Error[]): ReplySink {
  return { data() {}, end() {}, fail: (error: Error) => failures.push(error) } as unknown as ReplySink
}

describe('requests held while no Sentinel primary answers', () => {
  it('go out in the order they came once a primary answers', () => {
    const held = new HeldRequests(1000)
    const sent: number[] = []
    for (const request of [1, 2, 3]) held.hold(sink([]), () => sent.push(request))
    expect(sent).toEqual([])
    held.release()
    expect(sent).toEqual([1, 2, 3])
    expect(held.size).toBe(0)
  })

  it('fail as on a lost connection when none answers within the hold', async () => {
    const held = new HeldRequests(30)
    const failures: Error[] = []
    const sent: number[] = []
    held.hold(sink(failures), () => sent.push(1))
    await new Promise((resolve) => setTimeout(resolve, 80))
    expect(failures.map((error) => error.message)).toEqual([
      'ERR heatsink proxy: connection to redis lost (no primary answered within 30 ms)',
    ])
    held.release()
    expect(sent).toEqual([])
  })
})
