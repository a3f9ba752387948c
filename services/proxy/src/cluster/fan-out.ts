import { answer, decodingSink, type ReplySink } from '../backend/reply-sink.js'
import { ReplyError } from '../resp/reply-codec.js'
import { encodeRequest } from '../resp/request-parser.js'
import type { ClusterBackend } from './cluster-backend.js'

/**
 * How the replies of a keyless command that concerns the whole keyspace are combined when it is sent to every
 * master: behind one address a Cluster should answer as one Redis would.
 */
type Combine = 'sum' | 'concat' | 'all' | 'first-value' | 'and'

const WHOLE_KEYSPACE: ReadonlyMap<string, Combine> = new Map([
  ['dbsize', 'sum'],
  ['keys', 'concat'],
  ['flushall', 'all'],
  ['flushdb', 'all'],
  ['randomkey', 'first-value'],
])

// SCRIPT LOAD on every master, so that an EVALSHA reaches a master that knows the script whichever slot it names.
const SCRIPT: ReadonlyMap<string, Combine> = new Map([
  ['load', 'all'],
  ['flush', 'all'],
  ['exists', 'and'],
])

/** How `name args` is combined over every master, or undefined when it goes to one master like any command. */
export function fanOutOf(name: string, args: readonly Buffer[]): Combine | 'scan' | undefined {
  if (name === 'scan') return 'scan'
  if (name === 'script') return SCRIPT.get(args[0]?.toString('latin1').toLowerCase() ?? '')
  return WHOLE_KEYSPACE.get(name)
}

/**
 * Sends a request to every master and answers `sink` once all have replied: counts summed (DBSIZE), lists
 * joined (KEYS), the first non-nil value (RANDOMKEY), flags and-ed (SCRIPT EXISTS), else the first reply (OK,
 * SCRIPT LOAD's digest); the first error if any master failed.
 */
export function sendToEveryMaster(
  cluster: ClusterBackend,
  combine: Combine,
  request: Buffer,
  sink: ReplySink,
  index: number,
  resp3: boolean,
): void {
  const masters = cluster.masters()
  const replies = new Array<unknown>(masters.length)
  let left = masters.length
  masters.forEach((node, i) => {
    const connection = cluster.pool(node).shared(index, resp3)
    connection.send(
      request,
      decodingSink((reply) => {
        replies[i] = reply
        if (--left === 0) answer(sink, combined(combine, replies), resp3)
      }),
    )
  })
}

/**
 * SCAN over every master in turn, behind one cursor: the proxy's cursor is the master's cursor times the number
 * of masters plus the master's place in the sorted list, so 0 starts at the first master and a master's 0 moves
 * on to the next. A cursor from before the masters changed in number walks the wrong node (SCAN's guarantees hold
 * only while the topology stays).
 */
export function scanEveryMaster(
  cluster: ClusterBackend,
  args: readonly Buffer[],
  sink: ReplySink,
  index: number,
  resp3: boolean,
): void {
  const masters = cluster.masters()
  const count = BigInt(masters.length)
  let cursor: bigint
  try {
    cursor = BigInt(args[0]?.toString('latin1') ?? '')
    if (cursor < 0n) throw new RangeError()
  } catch {
    answer(sink, new ReplyError('ERR invalid cursor'), resp3)
    return
  }
  const place = Number(cursor % count)
  const request = encodeRequest(['SCAN', String(cursor / count), ...args.slice(1)])
  const connection = cluster.pool(masters[place] as string).shared(index, resp3)
  connection.send(
    request,
    decodingSink((reply) => {
      if (!Array.isArray(reply)) {
        answer(sink, reply, resp3)
        return
      }
      const next = BigInt((reply[0] as Buffer).toString('latin1'))
      const following =
        next === 0n ? (place + 1 < masters.length ? BigInt(place + 1) : 0n) : next * count + BigInt(place)
      answer(sink, [Buffer.from(String(following)), reply[1]], resp3)
    }),
  )
}

function combined(combine: Combine, replies: unknown[]): unknown {
  const error = replies.find((reply) => reply instanceof ReplyError)
  if (error !== undefined) return error
  switch (combine) {
    case 'sum':
      return replies.reduce((sum: number, reply) => sum + Number(reply), 0)
    case 'concat':
      return replies.flatMap((reply) => reply as unknown[])
    case 'first-value':
      return replies.find((reply) => reply !== null) ?? null
    case 'and':
      return (replies[0] as number[]).map((_, i) =>
        replies.every((reply) => (reply as number[])[i]) ? 1 : 0,
      )
    default:
      return replies[0]
  }
}
