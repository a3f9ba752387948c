import { callAt, type RedisCall } from './fan-out.js'
import type { SplitShard } from './layout.js'

/**
 * What a shard's gate said when read. A gate is a string "state:target:seq:moved" in the shard's slot (a string
 * rather than a hash, so that one MGET reads a counter shard and its gate together); no gate means open.
 */
export interface GateState {
  /** 'sealed': a drain is under way; 'merged': drained by a fold or reshard; undefined: open to writes. */
  readonly state: 'sealed' | 'merged' | undefined
  /** Where writes go while the gate is closed: a split factor, 1 meaning the base key. */
  readonly target: number
  /** Number of drains the shard has had; matches the counter move journal's entries. */
  readonly seq: number
  /** For a counter: the last finished drain's seq and the value it moved into the base key, until collected. */
  readonly moved: { readonly seq: number; readonly amount: bigint } | undefined
}

/** A gate with no fields: open, never drained. */
export const OPEN_GATE: GateState = { state: undefined, target: 1, seq: 0, moved: undefined }

const GATE = /^([a-z]*):(\d*):(\d*):(?:(\d+)\/(-?\d+))?$/

/** The command that reads a gate (decode its reply with decodeGate). */
export function readGate(shard: SplitShard): RedisCall {
  return callAt(shard.slot, 'get', shard.gate)
}

/** Decodes a gate string (null: no gate). */
export function decodeGate(reply: unknown): GateState {
  if (typeof reply !== 'string') return OPEN_GATE
  const match = GATE.exec(reply)
  if (match === null) return OPEN_GATE
  const [, state, target, seq, movedSeq, amount] = match
  return {
    state: state === 'sealed' || state === 'merged' ? state : undefined,
    target: target ? Number(target) : 1,
    seq: seq ? Number(seq) : 0,
    moved: movedSeq === undefined ? undefined : { seq: Number(movedSeq), amount: BigInt(amount!) },
  }
}

/** A script's answer that the shard's gate is closed: `{1, target}`; the target, or undefined when applied. */
export function redirectTarget(reply: unknown): number | undefined {
  if (Array.isArray(reply) && reply[0] === 1) return Number(reply[1])
  return undefined
}
