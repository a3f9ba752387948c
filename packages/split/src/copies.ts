import { layoutsFor, type SplitContext } from './context.js'
import { call, callAt, type RedisCall, script } from './fan-out.js'
import { decodeGate, readGate, redirectTarget } from './gate.js'
import { hashShard, randomShard } from './hash.js'

/** The expiry options setCopies takes, as ioredis' SET does. */
export type CopyExpiry = [] | ['EX', number] | ['PX', number]

const MAX_HOPS = 4

/**
 * Read-mostly values split as N copies, so that one key read far beyond a node's capacity spreads its reads: a write goes to every copy and to the base key, a
 * read to one copy, chosen by a hash of a routing id (the same caller always reads the same copy) or at random.
 * Copies are written in parallel, so for a moment they can differ; every write carries a stamp and a copy only
 * takes a newer one, so concurrent writers leave all copies with the same last value. The base key always holds
 * the newest value, so a copy that is missing (not yet written, evicted, folded) is read through from it and
 * repaired.
 */
export class SplitCopies {
  readonly #ctx: SplitContext

  constructor(ctx: SplitContext) {
    this.#ctx = ctx
  }

  /** SET on every copy and on the base key. Resolves to 'OK' as SET does (a newer write may already have won). */
  async set(key: string, n: number, value: string, expiry: CopyExpiry = []): Promise<'OK'> {
    let expireAt = 0
    if (expiry.length === 2) {
      const [unit, amount] = expiry
      if (!(Number.isInteger(amount) && amount > 0)) throw new RangeError(`invalid expire time ${amount}`)
      expireAt = this.#ctx.clock.now() + (unit === 'EX' ? amount * 1000 : amount)
    }
    await this.#write(key, n, 'set', value, expireAt)
    return 'OK'
  }

  /** DEL of the value: every copy and the base key. Resolves to 1 if the base key held a value, else 0. */
  async del(key: string, n: number): Promise<number> {
    // A deleted copy keeps its stamp for a while, so that an older write arriving late cannot bring it back.
    return this.#write(key, n, 'del', '', this.#ctx.clock.now() + this.#ctx.settings.sealTtlMs)
  }

  async #write(key: string, n: number, op: 'set' | 'del', value: string, expireAt: number): Promise<number> {
    const ctx = this.#ctx
    const stamp = ctx.stamps.next()
    const copy = (factor: number): RedisCall[] =>
      ctx.layouts
        .get(key, factor)
        .shards.map((shard) =>
          script('setCopy', [shard.data, shard.gate], op, value, stamp, ctx.agentId, expireAt),
        )
    const stampTtl = Math.max(ctx.settings.sealTtlMs, expireAt > 0 ? expireAt - ctx.clock.now() : 0)
    const baseCall = script(
      'setBase',
      [key, ctx.names.splitStampKey(key)],
      op,
      value,
      stamp,
      ctx.agentId,
      expireAt,
      stampTtl,
    )
    // The caller's layout and any this process is draining: agents still reading an old layout's copies see
    // the write too.
    const factors = layoutsFor(ctx, key, n).map((layout) => layout.n)
    for (const factor of factors) ctx.shardCounts.hitAll(key, factor)
    const replies = await ctx.fanOut.all([baseCall, ...factors.flatMap(copy)])
    const base = replies[0] as number[]
    // Copies whose gate is closed point at a newer layout: write its copies too, so that agents reading there
    // see this write even though this agent has not heard of the new layout yet.
    const written = new Set([1, ...factors])
    let targets = redirects(replies.slice(1), written)
    for (let hop = 0; hop < MAX_HOPS && targets.length > 0; hop++) {
      for (const target of targets) written.add(target)
      targets = redirects(await ctx.fanOut.all(targets.flatMap(copy)), written)
    }
    return base[0] === 1 ? Number(base[1]) : 0
  }

  /**
   * GET from one copy: the one `routingId` hashes to, or a random one. A missing copy, or one whose gate is
   * closed, is read through from the base key, and a missing open copy is repaired from it in the background.
   */
  async get(key: string, n: number, routingId?: string): Promise<string | null> {
    const ctx = this.#ctx
    if (n <= 1) return (await ctx.fanOut.one(call('get', key))) as string | null
    const index = routingId === undefined ? randomShard(ctx.random, n) : hashShard(routingId, n)
    const shard = ctx.layouts.get(key, n).shards[index]!
    ctx.shardCounts.hit(key, n, index)
    const [gateReply, copy] = (await ctx.fanOut.all([
      readGate(shard),
      callAt(shard.slot, 'hget', shard.data, 'v'),
    ])) as [string | null, string | null]
    const open = decodeGate(gateReply).state === undefined
    if (open && copy !== null) return copy
    const [value, held, expireAt] = (await ctx.fanOut.all([
      call('get', key),
      call('hmget', ctx.names.splitStampKey(key), 's', 'a'),
      call('pexpiretime', key),
    ])) as [string | null, [string | null, string | null], number]
    if (value !== null && open) {
      // The base key's stamp (0 if it was never written through the splitter) loses to any newer write.
      const repair = script(
        'setCopy',
        [shard.data, shard.gate],
        'set',
        value,
        held[0] ?? 0,
        held[1] ?? '',
        Math.max(0, expireAt),
      )
      ctx.fanOut.one(repair).catch(() => {})
    }
    return value
  }
}

function redirects(replies: readonly unknown[], known: ReadonlySet<number>): number[] {
  const targets = new Set<number>()
  for (const reply of replies) {
    const target = redirectTarget(reply)
    if (target !== undefined && !known.has(target)) targets.add(target)
  }
  return [...targets]
}
