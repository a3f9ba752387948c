import type { SplitContext } from './context.js'
import { call, script } from './fan-out.js'

/** One counter move recorded in a key's journal (see applyCounterMove-2.lua). */
export interface JournalEntry {
  readonly amount: bigint
  readonly appliedAt: number
  /** When the drain deleted the shard (or the collector found it deleted); undefined until then. */
  readonly finishedAt: number | undefined
  /** When the collector cleared the gate's record of the move; undefined until then. */
  readonly clearedAt: number | undefined
}

const EMPTY: ReadonlyMap<string, JournalEntry> = new Map()
// An entry with only its value and time applied: the drain has not (yet) deleted the shard.
const UNFINISHED = /=-?\d+,\d+(?:;|$)/

/**
 * Parses a journal string (';<field>=<value>,<applied at>[,<finished at>[,<cleared at>]]' per entry): entries by
 * field `<splitFactor>:<index>:<seq>`. Split by hand rather than by a regex: counter reads parse it.
 */
export function parseJournal(text: string | null): ReadonlyMap<string, JournalEntry> {
  if (text === null || text === '') return EMPTY
  const entries = new Map<string, JournalEntry>()
  for (const entry of text.split(';')) {
    const equals = entry.indexOf('=')
    if (equals < 0) continue
    const [amount, appliedAt, finishedAt, clearedAt] = entry.slice(equals + 1).split(',')
    entries.set(entry.slice(0, equals), {
      amount: BigInt(amount!),
      appliedAt: Number(appliedAt),
      finishedAt: finishedAt === undefined ? undefined : Number(finishedAt),
      clearedAt: clearedAt === undefined ? undefined : Number(clearedAt),
    })
  }
  return entries
}

/** Whether a journal string holds a move whose shard may still hold the value (its drain not finished). */
export function hasUnfinishedMove(text: string | null): boolean {
  return text !== null && UNFINISHED.test(text)
}

/** Records that the drain of `field` deleted its shard: readers of a snapshot need no gate for it any more. */
export async function finishMove(ctx: SplitContext, key: string, field: string): Promise<void> {
  await ctx.fanOut.one(
    script('editJournal', [ctx.names.splitJournalKey(key)], 'finish', ctx.clock.now(), field),
  )
}

/**
 * Collects a counter's move journal once no reader can need it, in two steps a grace period apart, because a
 * read of the base key and of a shard may straddle a drain:
 *
 * 1. an entry applied more than journalGraceMs ago whose drain finished: the gate's record of the move is
 *    cleared (clearMoved-1.lua) and the entry marked with the time;
 * 2. an entry marked more than journalGraceMs ago is deleted.
 *
 * So a gate never records a move whose entry is gone, which is what lets a reader that sees such a record
 * without its entry conclude that its base-key read came first (counter.ts). An entry whose shard is still
 * sealed under its seq (the drain died before finishing) is kept: it is what makes the resumed drain add
 * nothing twice. Resolves to the number of entries deleted.
 */
export async function collectJournal(ctx: SplitContext, key: string): Promise<number> {
  const journalKey = ctx.names.splitJournalKey(key)
  const journal = parseJournal((await ctx.fanOut.one(call('get', journalKey))) as string | null)
  const now = ctx.clock.now()
  const horizon = now - ctx.settings.journalGraceMs
  const expired: string[] = []
  const toClear: Array<{ field: string; n: number; index: number; seq: number }> = []
  for (const [field, entry] of journal) {
    if (entry.clearedAt !== undefined) {
      if (entry.clearedAt <= horizon) expired.push(field)
    } else if (entry.appliedAt <= horizon) {
      const [n, index, seq] = field.split(':').map(Number) as [number, number, number]
      toClear.push({ field, n, index, seq })
    }
  }
  if (toClear.length > 0) {
    const cleared = await ctx.fanOut.all(
      toClear.map(({ n, index, seq }) =>
        script('clearMoved', [ctx.layouts.get(key, n).shards[index]!.gate], seq),
      ),
    )
    const marked = toClear.filter((_, i) => cleared[i] === 1).map(({ field }) => field)
    if (marked.length > 0) await ctx.fanOut.one(script('editJournal', [journalKey], 'mark', now, ...marked))
  }
  if (expired.length === 0) return 0
  return Number(await ctx.fanOut.one(script('editJournal', [journalKey], 'drop', now, ...expired)))
}
