import { type CommandSpec, keyIndexes } from '@heatsink/commands'
import { answer, decodingSink, type ReplySink } from '../backend/reply-sink.js'
import { errorReply, ReplyError, StatusReply } from '../resp/reply-codec.js'
import { encodeRequest } from '../resp/request-parser.js'
import { calculateSlot } from './key-slot.js'

/** How the replies of a command split by slot are put back together, for the commands that can be split. */
const MERGES: ReadonlyMap<string, 'in-order' | 'sum' | 'ok'> = new Map([
  ['mget', 'in-order'],
  ['del', 'sum'],
  ['exists', 'sum'],
  ['unlink', 'sum'],
  ['touch', 'sum'],
  ['mset', 'ok'],
])

export const CROSSSLOT = errorReply("CROSSSLOT Keys in request don't hash to the same slot")

// Shard channels are not keys (detection never counts them), yet each lives on the master of its slot like one.
const SHARD_CHANNEL_COMMANDS: ReadonlySet<string> = new Set(['ssubscribe', 'sunsubscribe', 'spublish'])

/** The slots of a request's keys (empty for a command with no keys); a shard channel's for SSUBSCRIBE/SPUBLISH. */
export function slotsOf(spec: CommandSpec | undefined, args: readonly Buffer[]): number[] {
  if (spec === undefined) return []
  if (SHARD_CHANNEL_COMMANDS.has(spec.name)) return args[0] === undefined ? [] : [calculateSlot(args[0])]
  const slots: number[] = []
  for (const index of keyIndexes(spec, args)) {
    const key = args[index]
    if (key === undefined) continue
    const slot = calculateSlot(key)
    if (!slots.includes(slot)) slots.push(slot)
  }
  return slots
}

/** One part of a split request: its slot, its bytes, and where its keys were in the original. */
export interface SlotPart {
  slot: number
  request: Buffer
  positions: number[]
}

/**
 * A multi-key command over several slots as one request per slot (MGET, DEL, EXISTS, UNLINK, TOUCH by key; MSET
 * by key and value), or undefined when the command cannot be split and Redis' CROSSSLOT is the answer.
 */
export function splitBySlot(name: string, args: readonly Buffer[]): SlotPart[] | undefined {
  if (!MERGES.has(name)) return undefined
  const step = name === 'mset' ? 2 : 1
  const parts = new Map<number, { args: Buffer[]; positions: number[] }>()
  for (let i = 0; i < args.length; i += step) {
    const slot = calculateSlot(args[i] as Buffer)
    let part = parts.get(slot)
    if (part === undefined) {
      part = { args: [], positions: [] }
      parts.set(slot, part)
    }
    part.positions.push(i / step)
    for (let j = 0; j < step; j++) part.args.push(args[i + j] as Buffer)
  }
  return [...parts].map(([slot, part]) => ({
    slot,
    request: encodeRequest([name, ...part.args]),
    positions: part.positions,
  }))
}

/**
 * Collects the replies of the parts of a split request and, once all are in, answers `sink` with the merged
 * reply: MGET's values in the order of the original keys, the counts summed, MSET's OK; the first error if any.
 */
export class MergeSinks {
  readonly #name: string
  readonly #sink: ReplySink
  readonly #parts: SlotPart[]
  readonly #replies: unknown[]
  readonly #resp3: boolean
  #left: number
  #error: ReplyError | undefined

  /** `resp3`: the client speaks RESP3 (MGET's nils are `_`). */
  constructor(name: string, parts: SlotPart[], sink: ReplySink, resp3: boolean) {
    this.#name = name
    this.#resp3 = resp3
    this.#parts = parts
    this.#sink = sink
    this.#replies = new Array(parts.length)
    this.#left = parts.length
  }

  /** The sink of part `i`. */
  part(i: number): ReplySink {
    return decodingSink((reply) => this.#settle(i, reply))
  }

  #settle(i: number, reply: unknown): void {
    if (reply instanceof ReplyError) this.#error ??= reply
    this.#replies[i] = reply
    if (--this.#left > 0) return
    answer(this.#sink, this.#error ?? this.#merge(), this.#resp3)
  }

  #merge(): unknown {
    const merge = MERGES.get(this.#name)
    if (merge === 'sum') return this.#replies.reduce((sum: number, reply) => sum + Number(reply), 0)
    if (merge === 'ok') return new StatusReply('OK')
    const total = this.#parts.reduce((sum, part) => sum + part.positions.length, 0)
    const values = new Array<unknown>(total)
    this.#parts.forEach((part, i) => {
      const replies = this.#replies[i] as unknown[]
      part.positions.forEach((position, j) => {
        values[position] = replies[j]
      })
    })
    return values
  }
}
