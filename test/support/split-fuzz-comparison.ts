import type { Cluster } from 'ioredis'
import {
  type Client,
  isClusterError,
  isDeepEqual,
  shardsOnCluster,
  show,
  stateOf,
} from './split-comparison.js'
import { type FuzzBatch, fuzzBatches } from './split-fuzz.js'

/** Where a fuzz comparison runs: the same run for every front door and topology. */
export interface FuzzRun {
  /** The client under test: Heatsink's ioredis front door, or a plain client of the proxy. */
  readonly client: Client
  /** A client straight to Redis, which writes the counters' first values before the keys are split. */
  readonly plain: Client
  /** The name of key `k<n>` on the split side, and on the unsplit side. */
  splitName(name: string): string
  unsplitName(name: string): string
  /** Registers `keys` split over 4 shards, and resolves once the process serving `client` has them split. */
  split(keys: string[]): Promise<void>
  /**
   * Removes `keys` from the registry and resolves once the process serving `client` has them unsplit. With
   * `resplitEvery`, the keys are demoted and split again every that many batches: a key folded for good by a
   * command that is not a counter form is split anew, so that more of the run compares keys spread over shards.
   */
  demote?(keys: string[]): Promise<void>
  readonly resplitEvery?: number
  /** Called after each batch has run on both sides (to look at the shards before a fold removes them). */
  afterBatch?(index: number): Promise<void>
}

/** What a fuzz comparison found: each difference described, and how much was compared. */
export interface FuzzResult {
  readonly differences: string[]
  readonly batches: number
  readonly commands: number
}

/**
 * Sends the seed's batches (pipelines and transactions) on `keys` split keys and again on unsplit twins, and
 * describes every batch whose replies differ, then every key whose final state differs.
 */
export async function compareFuzz(
  run: FuzzRun,
  seed: number,
  keys: number,
  batches: number,
): Promise<FuzzResult> {
  const { client, plain, splitName, unsplitName } = run
  const names = Array.from({ length: keys }, (_, i) => `k${i}`)
  // Half the keys start as counters that held a value before they were split.
  for (const name of names.slice(0, keys / 2)) {
    await plain.set(splitName(name), '40')
    await plain.set(unsplitName(name), '40')
  }
  const promote = async () => {
    await run.split(names.map(splitName))
    // For 2 s after a promotion writes stay on the key itself, until every agent has heard of the split.
    await new Promise((done) => setTimeout(done, 2100))
  }
  await promote()

  const differences: string[] = []
  let commands = 0
  const sent = fuzzBatches(seed, keys, batches)
  for (const [index, batch] of sent.entries()) {
    if (
      run.demote !== undefined &&
      run.resplitEvery !== undefined &&
      index > 0 &&
      index % run.resplitEvery === 0
    ) {
      await run.demote(names.map(splitName))
      await promote()
    }
    const got = await runBatch(client, batch, splitName)
    const want = await runBatch(client, batch, unsplitName)
    commands += batch.commands.length
    await run.afterBatch?.(index)
    if (isClusterError(got) || isClusterError(want))
      differences.push(
        `batch ${index} ${describeBatch(batch)}: a Cluster error reached the client: ${show([got, want])}`,
      )
    else if (!isDeepEqual(got, want))
      differences.push(`batch ${index} ${describeBatch(batch)}: ${show(got)} != ${show(want)}`)
  }
  for (const name of names) {
    const after = await stateOf(client, splitName(name))
    const expected = await stateOf(client, unsplitName(name))
    if (!isDeepEqual(after, expected))
      differences.push(`state of ${name}: ${show(after)} != ${show(expected)}`)
  }
  return { differences, batches: sent.length, commands }
}

/** A fuzz run on a Redis Cluster: the run's parts that are not about naming or watching its keys. */
export type ClusterFuzzRun = Omit<FuzzRun, 'plain' | 'splitName' | 'unsplitName' | 'afterBatch'> & {
  readonly plain: Cluster
  readonly namespace: string
}

/**
 * compareFuzz on a Redis Cluster: each side's keys under one hash tag (a pipeline or transaction there names keys
 * of one slot), and how many batches ended with some counter spread over shards, on any master.
 */
export async function compareFuzzOnCluster(
  run: ClusterFuzzRun,
  seed: number,
  keys: number,
  batches: number,
): Promise<FuzzResult & { batchesWhileSplit: number }> {
  const { namespace, plain } = run
  let batchesWhileSplit = 0
  const result = await compareFuzz(
    {
      ...run,
      splitName: (name) => `{${namespace}}:s:${name}`,
      unsplitName: (name) => `{${namespace}}:u:${name}`,
      async afterBatch() {
        if (await shardsOnCluster(plain, namespace)) batchesWhileSplit++
      },
    },
    seed,
    keys,
    batches,
  )
  return { ...result, batchesWhileSplit }
}

/** One batch's replies, each error as its message. */
export async function runBatch(
  client: Client,
  batch: FuzzBatch,
  keyOf: (name: string) => string,
): Promise<unknown[]> {
  const pipeline = batch.transaction ? client.multi() : client.pipeline()
  for (const [command, key, ...rest] of batch.commands)
    pipeline.callBuffer(command as string, keyOf(key as string), ...rest)
  const results = (await pipeline.exec()) ?? []
  return results.map(([error, reply]) => (error === null ? reply : { error: error.message }))
}

function describeBatch(batch: FuzzBatch): string {
  const commands = batch.commands.map((command) =>
    command.map((arg) => (Buffer.isBuffer(arg) ? `<${arg.toString('hex')}>` : arg)).join(' '),
  )
  return `${batch.transaction ? 'MULTI ' : ''}[${commands.join('; ')}]`
}
