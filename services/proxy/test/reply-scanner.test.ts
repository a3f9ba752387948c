import { describe, expect, it } from 'vitest'
import { ReplyScanner } from '../src/resp/reply-scanner.js'

// Every reply's end, scanning the chunks in order as a backend connection does.
function replyEnds(chunks: Buffer[]): number[] {
  const scanner = new ReplyScanner()
  const ends: number[] = []
  let base = 0
  for (const chunk of chunks) {
    let from = 0
    while (from < chunk.length) {
      const end = scanner.scan(chunk, from)
      if (end === -1) break
      ends.push(base + end)
      from = end
    }
    base += chunk.length
  }
  return ends
}

const replies = [
  '+OK\r\n',
  '-ERR no\r\n',
  ':42\r\n',
  '$-1\r\n',
  '$5\r\nhe\r\nl\r\n',
  '*-1\r\n',
  '*0\r\n',
  '*3\r\n$1\r\na\r\n*2\r\n:1\r\n$0\r\n\r\n+x\r\n',
  // RESP3: a map, a set, a null, a double, a verbatim string, an attribute before its reply, a push.
  '%1\r\n+k\r\n,1.5\r\n',
  '~2\r\n#t\r\n_\r\n',
  '=8\r\ntxt:abcd\r\n',
  '|1\r\n+ttl\r\n:3\r\n$1\r\nv\r\n',
  '>2\r\n+message\r\n$1\r\nm\r\n',
]
const stream = Buffer.from(replies.join(''), 'latin1')
const expectedEnds = replies.reduce<number[]>((ends, reply) => {
  ends.push((ends.at(-1) ?? 0) + Buffer.byteLength(reply, 'latin1'))
  return ends
}, [])

describe('ReplyScanner', () => {
  it('finds the end of every RESP2 and RESP3 reply in one chunk', () => {
    expect(replyEnds([stream])).toEqual(expectedEnds)
  })

  it('finds the same ends when the bytes arrive one at a time', () => {
    expect(replyEnds([...stream].map((byte) => Buffer.from([byte])))).toEqual(expectedEnds)
  })

  it('streams a large bulk string: no end until its last byte, then exactly there', () => {
    const header = Buffer.from('$1000000\r\n')
    const body = Buffer.alloc(1_000_000, 1)
    const all = Buffer.concat([header, body, Buffer.from('\r\n:1\r\n')])
    const chunks: Buffer[] = []
    for (let i = 0; i < all.length; i += 4096) chunks.push(all.subarray(i, i + 4096))
    expect(replyEnds(chunks)).toEqual([header.length + body.length + 2, all.length])
  })
})
