/*
 * Seeded command sequences for comparing split keys with unsplit ones: mostly counter traffic (what a split key
 * serves over its shards), with the commands that make it fold mixed in (SET, binary values, set and string
 * commands, expiry), sent as pipelines of random length, some of them inside MULTI.
 */

/** One command: its name and arguments; `k<n>` names the n-th key of the run. */
export type FuzzCommand = Array<string | Buffer>

/** A batch sent at once: a pipeline, or a transaction (MULTI ... EXEC). */
export interface FuzzBatch {
  readonly transaction: boolean
  readonly commands: FuzzCommand[]
}

/** A small deterministic generator (mulberry32), so that a failing seed replays. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

type Pick = (random: () => number) => FuzzCommand

const integer = (random: () => number, span: number) => String(Math.floor(random() * span * 2) - span)
const binary = (random: () => number) =>
  Buffer.from(Array.from({ length: 1 + Math.floor(random() * 6) }, () => Math.floor(random() * 256)))

// Weighted: counter commands make up most of the traffic, so that keys stay split for a while.
const COMMANDS: Array<[number, Pick]> = [
  [20, () => ['INCR']],
  [10, () => ['DECR']],
  [15, (random) => ['INCRBY', integer(random, 1000)]],
  [5, (random) => ['DECRBY', integer(random, 1000)]],
  [20, () => ['GET']],
  [2, (random) => ['SET', integer(random, 50)]],
  [2, (random) => ['SET', binary(random)]],
  [1, () => ['INCRBY', 'x']],
  [1, () => ['DEL']],
  [1, () => ['EXISTS']],
  [1, () => ['TYPE']],
  [1, () => ['STRLEN']],
  [1, (random) => ['APPEND', binary(random)]],
  [1, (random) => ['SADD', binary(random), binary(random)]],
  [1, () => ['SCARD']],
  [1, () => ['EXPIRE', '100']],
  [1, () => ['TTL']],
  [1, () => ['INCRBYFLOAT', '0.5']],
]
const TOTAL = COMMANDS.reduce((sum, [weight]) => sum + weight, 0)

/** `batches` batches over `keys` keys (named k0, k1, ...), from `seed`. */
export function fuzzBatches(seed: number, keys: number, batches: number): FuzzBatch[] {
  const random = seededRandom(seed)
  const out: FuzzBatch[] = []
  for (let b = 0; b < batches; b++) {
    const commands: FuzzCommand[] = []
    const length = 1 + Math.floor(random() * 8)
    for (let i = 0; i < length; i++) {
      const [name, ...rest] = pickCommand(random() * TOTAL)(random)
      commands.push([name as string, `k${Math.floor(random() * keys)}`, ...rest])
    }
    out.push({ transaction: random() < 0.2, commands })
  }
  return out
}

function pickCommand(roll: number): Pick {
  let left = roll
  for (const [weight, pick] of COMMANDS) {
    if (left < weight) return pick
    left -= weight
  }
  return (COMMANDS[0] as [number, Pick])[1]
}
