import type { ReplyShape } from '@heatsink/commands'
import { encodeNested, encodeReply } from './reply-codec.js'

/**
 * How a reply looks in RESP3 where it differs from RESP2. The data-plane core holds replies as RESP2 gives them
 * (L1, shared reads, split keys' aggregates); RESP3 carries the same data with richer types, chosen by the
 * command's reply shape in @heatsink/commands (Redis's own reply code picks them the same way):
 * - plain: as RESP2, but nil is `_` (also inside arrays);
 * - map: HGETALL's field/value list as `%`;  set: SMEMBERS's members as `~`;
 * - double: a score (ZSCORE) as `,`;  doubles: ZMSCORE's list of scores;
 * - scored: a sorted-set range WITHSCORES as `[member, score]` pairs;  rank-score: ZRANK ... WITHSCORE.
 */
export type Resp3Shape = 'plain' | 'map' | 'set' | 'double' | 'doubles' | 'scored' | 'rank-score'

/** The RESP3 form of a reply of `shape` (the command's; undefined: not cacheable), given the call's arguments. */
export function resp3Shape(shape: ReplyShape | undefined, args: readonly Buffer[]): Resp3Shape {
  switch (shape) {
    case 'pairs':
      return 'map'
    case 'members':
      return 'set'
    case 'score':
      return 'double'
    case 'scores':
      return 'doubles'
    case 'rank':
      return hasFlag(args, 'withscore') ? 'rank-score' : 'plain'
    case 'range':
      return hasFlag(args, 'withscores') ? 'scored' : 'plain'
    default:
      return 'plain'
  }
}

/** `value` (as the core holds it) in RESP3 bytes of `shape`, appended to `out`. */
export function encodeResp3(value: unknown, shape: Resp3Shape, out: Buffer[]): void {
  if (!Array.isArray(value)) {
    if (value === null || value === undefined) out.push(NULL)
    else if (shape === 'double') out.push(Buffer.from(`,${text(value)}\r\n`))
    else encodeReply(value, out)
    return
  }
  switch (shape) {
    case 'map':
      out.push(Buffer.from(`%${value.length / 2}\r\n`))
      encodeItems(value, 'plain', out)
      break
    case 'set':
      out.push(Buffer.from(`~${value.length}\r\n`))
      encodeItems(value, 'plain', out)
      break
    case 'doubles':
      out.push(Buffer.from(`*${value.length}\r\n`))
      encodeItems(value, 'double', out)
      break
    case 'scored':
      out.push(Buffer.from(`*${value.length / 2}\r\n`))
      for (let i = 0; i < value.length; i += 2) {
        out.push(PAIR)
        encodeResp3(value[i], 'plain', out)
        encodeResp3(value[i + 1], 'double', out)
      }
      break
    case 'rank-score':
      out.push(PAIR)
      encodeResp3(value[0], 'plain', out)
      encodeResp3(value[1], 'double', out)
      break
    default:
      // A plain array may be nested as deep as a script made it.
      encodeNested(value, out, NULL)
  }
}

/** `value` in RESP3 bytes of `shape`, in one Buffer. */
export function resp3Bytes(value: unknown, shape: Resp3Shape): Buffer {
  const out: Buffer[] = []
  encodeResp3(value, shape, out)
  return out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out)
}

function encodeItems(items: unknown[], shape: Resp3Shape, out: Buffer[]): void {
  for (const item of items) encodeResp3(item, shape, out)
}

function hasFlag(args: readonly Buffer[], flag: string): boolean {
  for (let i = 1; i < args.length; i++) {
    const arg = args[i] as Buffer
    if (arg.length === flag.length && arg.toString('latin1').toLowerCase() === flag) return true
  }
  return false
}

function text(value: unknown): string {
  return Buffer.isBuffer(value) ? value.toString('latin1') : String(value)
}

const NULL = Buffer.from('_\r\n')
const PAIR = Buffer.from('*2\r\n')
