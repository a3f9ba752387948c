import type { SplitContext } from './context.js'
import { call } from './fan-out.js'
import { hashShard } from './hash.js'
import { readLayers } from './layers.js'
import type { SplitLayout } from './layout.js'
import { compareScored, pairScores, type ScoredMember } from './member-order.js'

// One ranked list being merged: a shard of a layer, or the base key (the last layer).
interface RankedList {
  readonly layer: number
  readonly name: string
  readonly entries: ScoredMember[]
  readonly members: Set<string>
  exhausted: boolean
}

/**
 * ZRANGE / ZREVRANGE by rank over every layer. Each shard (and the base key) is read from rank 0 in parallel, and
 * the lists are merged in Redis' order. An entry counts only if no newer layer holds its member; whether one does
 * is known from what was fetched or asked with ZMSCORE on the member's home shard there (a second round trip, only
 * when older layers have entries). The merged prefix is exact up to the lowest last entry of any list that may
 * hold more; when that prefix is too short, the lists that can still matter are read further, in growing pages.
 * Negative ranks are resolved against sortedCard first, as Redis resolves them against ZCARD.
 */
export async function sortedRange(
  ctx: SplitContext,
  key: string,
  layouts: readonly SplitLayout[],
  start: number,
  stop: number,
  reverse: boolean,
): Promise<ScoredMember[]> {
  if (start < 0 || stop < 0) {
    const total = await sortedCard(ctx, key, layouts)
    if (start < 0) start = Math.max(0, total + start)
    if (stop < 0) stop = total + stop
  }
  if (stop < start) return []
  const want = stop + 1
  const command = reverse ? 'zrevrange' : 'zrange'
  let page = want
  const first = await readLayers(ctx, layouts, {
    shard: (shard) => [call(command, shard.data, 0, page - 1, 'WITHSCORES')],
    decodeShard: ([reply]) => pairScores(reply as string[]),
    base: [call(command, key, 0, page - 1, 'WITHSCORES')],
    decodeBase: ([reply]) => pairScores(reply as string[]),
  })
  const layerLayouts = first.layers.map((layer) => layer.layout)
  const lists: RankedList[] = []
  const addList = (layer: number, name: string, entries: ScoredMember[]) =>
    lists.push({
      layer,
      name,
      entries,
      members: new Set(entries.map((e) => e.member)),
      exhausted: entries.length < page,
    })
  first.layers.forEach((layer, index) => {
    for (const { shard, value } of layer.shards) addList(index, shard.data, value)
  })
  addList(layerLayouts.length, key, first.base)

  // `${layer}\n${member}` -> whether that layer holds the member, from lookups.
  const looked = new Map<string, boolean>()
  for (;;) {
    const holds = holdsFn(lists, layerLayouts.length, looked)
    await lookUp(ctx, lists, layerLayouts, holds, looked)
    const valid: ScoredMember[] = []
    for (const list of lists) {
      for (const entry of list.entries) {
        let hidden = false
        for (let h = 0; h < list.layer && !hidden; h++) hidden = holds(h, entry.member) === true
        if (!hidden) valid.push(entry)
      }
    }
    valid.sort((a, b) => compareScored(a, b, reverse))
    let boundary: ScoredMember | undefined
    for (const list of lists) {
      const last = list.entries.at(-1)
      if (
        !list.exhausted &&
        last !== undefined &&
        (boundary === undefined || compareScored(last, boundary, reverse) < 0)
      ) {
        boundary = last
      }
    }
    let exact = valid.length
    if (boundary !== undefined) {
      const limit = boundary
      exact = valid.findIndex((entry) => compareScored(entry, limit, reverse) > 0)
      if (exact === -1) exact = valid.length
    }
    if (exact >= want || boundary === undefined) return valid.slice(start, want)

    // Entries after the current want-th candidate cannot reach the range; read further only lists before it.
    const cutoff = valid[want - 1]
    page *= 2
    const more = lists.filter(
      (list) =>
        !list.exhausted &&
        (cutoff === undefined || compareScored(list.entries.at(-1)!, cutoff, reverse) <= 0),
    )
    const replies = await ctx.fanOut.all(
      more.map((list) =>
        call(command, list.name, list.entries.length, list.entries.length + page - 1, 'WITHSCORES'),
      ),
    )
    more.forEach((list, i) => {
      const got = pairScores(replies[i] as string[])
      // Concurrent writes can shift ranks between pages: a member seen twice keeps its first entry.
      for (const entry of got) {
        if (!list.members.has(entry.member)) {
          list.members.add(entry.member)
          list.entries.push(entry)
        }
      }
      list.exhausted = got.length < page
    })
  }
}

// Whether layer `h` holds `member`: true/false when known, undefined when a lookup is needed. A layer whose lists
// were all read to the end is known completely.
function holdsFn(lists: readonly RankedList[], layers: number, looked: Map<string, boolean>) {
  const complete = new Array<boolean>(layers + 1).fill(true)
  for (const list of lists) if (!list.exhausted) complete[list.layer] = false
  return (h: number, member: string): boolean | undefined => {
    for (const list of lists) if (list.layer === h && list.members.has(member)) return true
    if (complete[h]) return false
    return looked.get(`${h}\n${member}`)
  }
}

async function lookUp(
  ctx: SplitContext,
  lists: readonly RankedList[],
  layouts: readonly SplitLayout[],
  holds: (h: number, member: string) => boolean | undefined,
  looked: Map<string, boolean>,
): Promise<void> {
  const asks = new Map<string, { layer: number; members: Set<string> }>()
  for (const list of lists) {
    for (const { member } of list.entries) {
      for (let h = 0; h < list.layer; h++) {
        const known = holds(h, member)
        if (known === true) break
        if (known === false) continue
        const layout = layouts[h]!
        const shard = layout.shards[hashShard(member, layout.n)]!
        const ask = asks.get(shard.data)
        if (ask === undefined) asks.set(shard.data, { layer: h, members: new Set([member]) })
        else ask.members.add(member)
      }
    }
  }
  if (asks.size === 0) return
  const groups = [...asks]
  const replies = await ctx.fanOut.all(groups.map(([name, ask]) => call('zmscore', name, ...ask.members)))
  groups.forEach(([, ask], i) => {
    const scores = replies[i] as Array<string | null>
    let j = 0
    for (const member of ask.members) looked.set(`${ask.layer}\n${member}`, scores[j++] !== null)
  })
}

/**
 * Number of distinct members over every layer. Within a layout a member lives in one shard, so a layout's count is
 * the sum of its shards' ZCARDs; only when more than one layer (the base key included) has members must the
 * members of the older ones be read and matched against the newer ones.
 */
export async function sortedCard(
  ctx: SplitContext,
  key: string,
  layouts: readonly SplitLayout[],
): Promise<number> {
  const { layers, base } = await readLayers(ctx, layouts, {
    shard: (shard) => [call('zcard', shard.data)],
    decodeShard: ([count]) => Number(count),
    base: [call('zcard', key)],
    decodeBase: ([count]) => Number(count),
  })
  // Per layer (base last): its count and the lists holding members.
  const counts = layers.map((layer) => layer.shards.reduce((sum, shard) => sum + shard.value, 0))
  counts.push(base)
  const nonEmpty = counts.flatMap((count, layer) => (count > 0 ? [layer] : []))
  const total = counts.reduce((sum, count) => sum + count, 0)
  if (nonEmpty.length <= 1) return total

  const [top, ...older] = nonEmpty as [number, ...number[]]
  const names = (layer: number) =>
    layer === layers.length
      ? [key]
      : layers[layer]!.shards.filter((shard) => shard.value > 0).map((shard) => shard.shard.data)
  const reads = older.flatMap((layer) => names(layer).map((name) => ({ layer, name })))
  const replies = await ctx.fanOut.all(reads.map(({ name }) => call('zrange', name, 0, -1)))
  const members = new Map<number, Set<string>>(older.map((layer) => [layer, new Set<string>()]))
  reads.forEach(({ layer }, i) => {
    for (const member of replies[i] as string[]) members.get(layer)!.add(member)
  })

  let distinct = counts[top]!
  const candidates = new Set<string>()
  for (const layer of older) for (const member of members.get(layer)!) candidates.add(member)
  // A candidate still counts unless the newest non-empty layer (a layout) holds it.
  const topLayout = layers[top]!.layout
  const asks = new Map<string, string[]>()
  for (const member of candidates) {
    const name = topLayout.shards[hashShard(member, topLayout.n)]!.data
    const list = asks.get(name)
    if (list === undefined) asks.set(name, [member])
    else list.push(member)
  }
  const groups = [...asks]
  const scores = await ctx.fanOut.all(groups.map(([name, list]) => call('zmscore', name, ...list)))
  for (const reply of scores)
    for (const score of reply as Array<string | null>) if (score === null) distinct++
  return distinct
}
