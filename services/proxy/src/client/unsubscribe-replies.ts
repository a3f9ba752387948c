/**
 * Redis's answer to UNSUBSCRIBE, PUNSUBSCRIBE or SUNSUBSCRIBE on a connection subscribed to nothing: one frame per
 * channel named (or one with a nil channel when none is), each counting 0 subscriptions left, as an array in RESP2
 * and a push in RESP3; the connection stays a normal one. The proxy answers these itself, since Redis's several
 * frames to one request cannot share a backend connection matched request by request.
 */
export function notSubscribedReply(command: string, channels: readonly Buffer[], resp3: boolean): Buffer {
  const head = Buffer.from(`${resp3 ? '>' : '*'}3\r\n$${command.length}\r\n${command}\r\n`)
  if (channels.length === 0) return Buffer.concat([head, resp3 ? RESP3_NIL : RESP2_NIL, NONE_LEFT])
  const parts: Buffer[] = []
  for (const channel of channels)
    parts.push(head, Buffer.from(`$${channel.length}\r\n`), channel, CRLF, NONE_LEFT)
  return Buffer.concat(parts)
}

/** The commands notSubscribedReply answers. */
export const UNSUBSCRIBE_COMMANDS: ReadonlySet<string> = new Set([
  'unsubscribe',
  'punsubscribe',
  'sunsubscribe',
])

const CRLF = Buffer.from('\r\n')
const NONE_LEFT = Buffer.from(':0\r\n')
const RESP2_NIL = Buffer.from('$-1\r\n')
const RESP3_NIL = Buffer.from('_\r\n')
