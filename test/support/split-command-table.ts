import {
  COMMAND_LINES,
  type CommandLine,
  RANDOM_ORDER,
  SECONDS_SINCE_TOUCHED,
} from './split-command-lines.js'
import {
  type Client,
  CONTENTS,
  type Content,
  fillOthers,
  isClusterError,
  isDeepEqual,
  outcome,
  resolve,
  type Side,
  show,
  sideKeys,
  sorted,
  stateOf,
} from './split-comparison.js'

/** Where a command-table comparison runs: the same run for every front door and topology. */
export interface CommandTableRun {
  /** The client under test: Heatsink's ioredis front door, or a plain client of the proxy. */
  readonly client: Client
  /** A client straight to Redis, which writes each key's content before the key is split. */
  readonly plain: Client
  /** Starts every key the run names (the test's namespace, for its cleanup). */
  readonly prefix: string
  /** Registers `keys` split over 4 shards, and resolves once the process serving `client` has them split. */
  split(keys: string[]): Promise<void>
}

/**
 * How many counters may be found unspread while the run still shows the counters were split: the agent's
 * reconciler moves a drifted shard's value into the key itself every 5 s, and may do so between a counter's two
 * increments and the look at the key (seen on 1 or 2 of 120 counters on a loaded machine).
 */
export const MOST_UNSPREAD = Math.floor(COMMAND_LINES.length / 20)

/** What a comparison found: each difference described, and what was compared. */
export interface CommandTableResult {
  readonly differences: string[]
  /** Command lines run, times the contents each ran on. */
  readonly compared: number
  /** The lines whose counter's increments did not go to shards, but to the key itself (should be none). */
  readonly unspread: string[]
}

/**
 * Runs every command line on a split key and on an unsplit twin, for every content the key may hold, and
 * describes each reply or resulting state (of the key and of the other keys the line names) that differs
 * byte for byte, errors included.
 */
export async function compareCommandTable(
  run: CommandTableRun,
  lines: readonly CommandLine[] = COMMAND_LINES,
): Promise<CommandTableResult> {
  const { client, plain, prefix } = run
  await plain.set(`${prefix}:payload-source`, 'restored')
  const payload = (await plain.dumpBuffer(`${prefix}:payload-source`)) as Buffer

  const pairs: Array<{ line: CommandLine; content: Content; split: Side; unsplit: Side }> = []
  for (const [i, line] of lines.entries()) {
    for (const content of Object.keys(CONTENTS) as Content[]) {
      // Both sides in one hash slot: a command naming several keys of a side is legal on a Redis Cluster, and
      // both sides are on one server, whose hash seed orders a set's members (SMEMBERS, DUMP).
      const tag = `{${i}:${content}}`
      const split = sideKeys(`${prefix}:${tag}:s`)
      const unsplit = sideKeys(`${prefix}:${tag}:u`)
      pairs.push({ line, content, split, unsplit })
      for (const side of [split, unsplit]) {
        await CONTENTS[content](plain, side.K)
        await fillOthers(plain, side)
      }
    }
  }
  await run.split(pairs.map(({ split }) => split.K))
  // For 2 s after a promotion writes stay on the key itself, until every agent has heard of the split.
  await new Promise((done) => setTimeout(done, 2100))

  const differences: string[] = []
  const unspread: string[] = []
  for (const { line, content, split, unsplit } of pairs) {
    if (content === 'counter') {
      // Two increments over the shards first, so that the split key's value is spread when the command runs.
      for (const side of [split, unsplit]) for (let i = 0; i < 2; i++) await client.incr(side.K)
      const base = await plain.get(split.K)
      if (base !== '40') unspread.push(`${line.join(' ')}: the key itself holds ${base}`)
    }
    const order = RANDOM_ORDER.has(line[0] as string) ? sorted : (reply: unknown) => reply
    // BZPOPMIN and the like name the key they popped from: each side's own name.
    const got = order(named(await outcome(client, resolve(line, split, payload)), split.K))
    const want = order(named(await outcome(client, resolve(line, unsplit, payload)), unsplit.K))
    const label = `${line.join(' ')} on ${content}`
    const near = SECONDS_SINCE_TOUCHED.has(line.join(' ')) && withinOne(got, want)
    if (!near && !isDeepEqual(got, want)) differences.push(`${label}: ${show(got)} != ${show(want)}`)
    // Equal on both sides is not enough: a client must never see the Cluster's own redirects and slot errors.
    if (isClusterError(got) || isClusterError(want))
      differences.push(`${label}: a Cluster error reached the client: ${show([got, want])}`)
    for (const name of ['K', 'S', 'Z', 'T', 'D'] as const) {
      const after = await stateOf(client, split[name])
      const expected = await stateOf(client, unsplit[name])
      if (!isDeepEqual(after, expected))
        differences.push(`${label}, state of ${name}: ${show(after)} != ${show(expected)}`)
    }
  }
  return { differences, compared: pairs.length, unspread }
}

function named(reply: unknown, key: string): unknown {
  if (Array.isArray(reply)) return reply.map((item) => named(item, key))
  return Buffer.isBuffer(reply) && reply.equals(Buffer.from(key)) ? 'K' : reply
}

function withinOne(a: unknown, b: unknown): boolean {
  return typeof a === 'number' && typeof b === 'number' && Math.abs(a - b) <= 1
}
