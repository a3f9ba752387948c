import { redisClusterSlot } from '@heatsink/protocol'
import type { RedisScript } from '@heatsink/redis-script'
import type { ChainableCommander, Cluster, Redis } from 'ioredis'
import { type ScriptName, splitScript } from './scripts.js'

/** One Redis command, with the slot its keys hash to (every key of one command shares a slot). */
export interface RedisCall {
  readonly slot: number
  /** A plain command's name, as ioredis names its method; for a script, the script's. */
  readonly command: string
  /** A plain command's arguments; a script's ARGV. */
  readonly args: ReadonlyArray<string | number>
  /** One of this package's scripts, run with `keys` as its KEYS. */
  readonly script?: RedisScript
  readonly keys?: readonly string[]
}

// The slot is worked out only when a batch is grouped by node: a command sent alone (every write) never needs it.

/** A plain Redis command on `key` (its first key). */
export function call(command: string, key: string, ...rest: Array<string | number>): RedisCall {
  return {
    get slot() {
      return redisClusterSlot(key)
    },
    command,
    args: [key, ...rest],
  }
}

/** A plain command on `key` whose slot the caller knows already (a shard's), sparing a CRC on the hot path. */
export function callAt(
  slot: number,
  command: string,
  key: string,
  ...rest: Array<string | number>
): RedisCall {
  return { slot, command, args: [key, ...rest] }
}

/** One of this package's scripts; `keys` are its KEYS, all in one slot. */
export function script(
  name: ScriptName,
  keys: readonly string[],
  ...argv: Array<string | number>
): RedisCall {
  return {
    get slot() {
      return redisClusterSlot(keys[0]!)
    },
    command: name,
    args: argv,
    script: splitScript(name),
    keys,
  }
}

// Pipelines and clients expose every command as a method of this shape.
type Commander = Record<string, (...args: Array<string | number>) => unknown>

/** Sends one call through a client or a Cluster (a promise of its reply), or queues it on a pipeline. */
function send(target: Redis | Cluster | ChainableCommander, request: RedisCall): unknown {
  if (request.script !== undefined) return request.script.run(target, request.keys ?? [], request.args)
  return (target as unknown as Commander)[request.command]!(...request.args)
}
type ExecResult = Array<[Error | null, unknown]> | null

// Errors after which ioredis, sending the one command itself, follows the cluster to the right node.
const REDIRECTED = /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN)\b/

/**
 * Sends many commands in parallel with one round trip per Redis node: on a standalone Redis one pipeline; on a
 * Cluster one pipeline per master, grouped by the client's slot map. Shards are spread over slots on purpose,
 * so a Lua script cannot read several of them; a per-node pipeline is the widest batch Redis Cluster allows.
 *
 * A group goes straight down its master's own connection (cluster.nodes()): a Cluster
 * pipeline re-hashes every key to check the group, which measured slower than the extra round trip it saves
 * elsewhere. Commands that come back MOVED or ASK (a slot moved since the map was read), and groups the slot map
 * no longer allows, are re-sent one by one through the cluster client, which follows the cluster.
 */
export class FanOut {
  readonly #redis: Redis | Cluster
  readonly #cluster: Cluster | undefined
  #nodes: Map<string, Redis> | undefined

  constructor(redis: Redis | Cluster) {
    this.#redis = redis
    this.#cluster = 'isCluster' in redis && redis.isCluster ? (redis as Cluster) : undefined
    if (this.#cluster !== undefined) {
      const forget = () => {
        this.#nodes = undefined
      }
      this.#cluster.on('+node', forget)
      this.#cluster.on('-node', forget)
      this.#cluster.on('refresh', forget)
    }
  }

  /** Whether the client is a Redis Cluster. */
  get isCluster(): boolean {
    return this.#cluster !== undefined
  }

  /** Runs one command on its own (no pipeline), as the client would. */
  one(request: RedisCall): Promise<unknown> {
    return send(this.#redis, request) as Promise<unknown>
  }

  /** Runs every command; resolves to their replies in order, or rejects with the first command's error. */
  async all(requests: readonly RedisCall[]): Promise<unknown[]> {
    if (requests.length === 0) return []
    if (requests.length === 1) return [await this.one(requests[0]!)]
    const replies = new Array<unknown>(requests.length)
    const groups = this.#group(requests)
    await Promise.all(groups.map((positions) => this.#runGroup(requests, positions, replies)))
    return replies
  }

  // Positions of the requests, grouped by the node that serves their slot.
  #group(requests: readonly RedisCall[]): number[][] {
    if (this.#cluster === undefined) return [requests.map((_, i) => i)]
    const slots = this.#cluster.slots
    const byNode = new Map<string, number[]>()
    for (let i = 0; i < requests.length; i++) {
      const slot = requests[i]!.slot
      // Before the slot map arrives, each slot is its own group: always a valid pipeline.
      const node = slots[slot]?.[0] ?? `slot:${slot}`
      const group = byNode.get(node)
      if (group === undefined) byNode.set(node, [i])
      else group.push(i)
    }
    return [...byNode.values()]
  }

  // A master's own connection for a group; undefined sends the group through the cluster.
  #nodeFor(requests: readonly RedisCall[], positions: readonly number[]): Redis | undefined {
    const cluster = this.#cluster
    if (cluster === undefined) return undefined
    const nodeKey = cluster.slots[requests[positions[0]!]!.slot]?.[0]
    if (nodeKey === undefined) return undefined
    if (this.#nodes === undefined) {
      this.#nodes = new Map()
      for (const node of cluster.nodes('master'))
        this.#nodes.set(`${node.options.host}:${node.options.port}`, node)
    }
    const node = this.#nodes.get(nodeKey)
    return node?.status === 'ready' ? node : undefined
  }

  async #runGroup(requests: readonly RedisCall[], positions: number[], replies: unknown[]): Promise<void> {
    if (positions.length === 1) {
      const position = positions[0]!
      replies[position] = await this.one(requests[position]!)
      return
    }
    const pipeline = (this.#nodeFor(requests, positions) ?? this.#redis).pipeline()
    // Every reply, and every error, is read from exec()'s results.
    for (const position of positions) send(pipeline, requests[position]!)
    let results: ExecResult
    try {
      results = (await pipeline.exec()) as ExecResult
    } catch (error) {
      // The slot map changed between grouping and sending: the pipeline spans nodes now.
      if (this.#cluster === undefined) throw error
      await Promise.all(
        positions.map(async (position) => {
          replies[position] = await this.one(requests[position]!)
        }),
      )
      return
    }
    if (results === null) throw new Error('pipeline was discarded')
    const retries: Array<Promise<void>> = []
    let failure: Error | undefined
    for (let i = 0; i < positions.length; i++) {
      const [error, reply] = results[i]!
      const position = positions[i]!
      if (error === null) replies[position] = reply
      else if (this.#cluster !== undefined && REDIRECTED.test(error.message)) {
        retries.push(
          this.one(requests[position]!).then((again) => {
            replies[position] = again
          }),
        )
      } else failure ??= error
    }
    // Settle the retries before failing, so that none is left to reject unobserved.
    const settled = await Promise.allSettled(retries)
    if (failure !== undefined) throw failure
    for (const outcome of settled) if (outcome.status === 'rejected') throw outcome.reason
  }
}
