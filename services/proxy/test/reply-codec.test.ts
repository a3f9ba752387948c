import { describe, expect, it } from 'vitest'
import { decodeReply, ReplyError, replyBytes, StatusReply } from '../src/resp/reply-codec.js'
import { resp3Bytes } from '../src/resp/resp3-reply.js'

// A reply of arrays nested `depth` deep around one error, as a Lua script returning a table that holds itself.
function nested(depth: number, open: string): Buffer {
  return Buffer.from(`${open.repeat(depth)}-ERR reached lua stack limit\r\n`)
}

describe('decodeReply and encodeReply', () => {
  it('decode and re-encode a reply nested 100,000 deep, ten times deeper than the JavaScript stack allows recursion', () => {
    const depth = 100_000
    const bytes = nested(depth, '*1\r\n')
    const value = decodeReply(bytes)
    expect(replyBytes(value).equals(bytes)).toBe(true)
    expect(resp3Bytes(value, 'plain').equals(bytes)).toBe(true)
    // RESP3's aggregates and attributes nest the same way.
    expect(replyBytes(decodeReply(nested(depth, '~1\r\n'))).equals(bytes)).toBe(true)
    expect(replyBytes(decodeReply(nested(depth, '|0\r\n*1\r\n'))).equals(bytes)).toBe(true)
  })

  it('decode every RESP2 and RESP3 type as the core holds them', () => {
    const reply = Buffer.from(
      '*9\r\n+OK\r\n-ERR no\r\n:42\r\n$-1\r\n$3\r\na\r\n\r\n*-1\r\n%1\r\n$1\r\nk\r\n#t\r\n|1\r\n+a\r\n:1\r\n,1.5\r\n' +
        '*2\r\n_\r\n=7\r\ntxt:abc\r\n',
    )
    expect(decodeReply(reply)).toEqual([
      new StatusReply('OK'),
      new ReplyError('ERR no'),
      42,
      null,
      Buffer.from('a\r\n'),
      null,
      [Buffer.from('k'), 1],
      Buffer.from('1.5'),
      [null, Buffer.from('abc')],
    ])
  })
})
