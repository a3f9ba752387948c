import type { HeatsinkHandle } from '@heatsink/agent'

/** One read of the counter: when it started and ended (performance.now()), what it returned, and from where. */
interface Read {
  readonly start: number
  readonly end: number
  readonly value: number
  readonly fromL1: boolean
}

/** The clients of one scenario; any ioredis Redis or Cluster, plain or Heatsink's. */
export interface TrafficClients {
  readonly key: string
  readonly writer: { incr(key: string): Promise<number> }
  /** The reference: a plain ioredis client with the application's options. */
  readonly plain: { get(key: string): Promise<string | null> }
  readonly heatsink: {
    get(key: string): Promise<string | null>
    heatsink: Pick<HeatsinkHandle, 'stats' | 'mitigation'>
  }
}

/** What a failover cost each reader, measured against the plain reader. */
export interface FailoverFigures {
  readonly heatsinkReads: number
  readonly heatsinkL1Hits: number
  /**
   * Heatsink reads older than a value the plain reader had seen, and kept seeing, before the read started,
   * before and after the switch; and the longest time by which such a read was behind the plain reader.
   */
  readonly staleBeforeSwitch: number
  readonly staleAfterSwitch: number
  readonly maxStaleMsBeforeSwitch: number
  readonly maxStaleMsAfterSwitch: number
  /** Plain reads lower than the plain reader's previous one: writes Redis lost in the failover. */
  readonly plainRegressions: number
  readonly heatsinkRegressions: number
  readonly heatsinkErrors: number
  readonly plainErrors: number
  readonly writerErrors: number
  /** From the switch to the first L1 hit after which the agent's invalidation channels stayed up. */
  readonly l1BackMs: number | undefined
}

/**
 * Runs a writer incrementing `key` and two readers side by side until stopped: the plain reference and the
 * Heatsink client, each in its own loop, yielding to I/O between reads (an L1 hit never does by itself).
 */
export function startTraffic(clients: TrafficClients) {
  let running = true
  const plainReads: Read[] = []
  const heatsinkReads: Read[] = []
  const downAt: number[] = []
  const errors = { heatsink: 0, plain: 0, writer: 0 }
  const turn = () => new Promise((resolve) => setImmediate(resolve))
  const loop = async (step: () => Promise<void>, onError: () => void) => {
    while (running) {
      await step().catch(onError)
      await turn()
    }
  }
  const read = async (get: () => Promise<string | null>, into: Read[], hits?: () => number) => {
    const before = hits?.()
    const start = performance.now()
    const value = Number((await get()) ?? 0)
    into.push({ start, end: performance.now(), value, fromL1: before !== undefined && hits?.() !== before })
  }
  const stats = () => clients.heatsink.heatsink.stats()
  const loops = [
    loop(
      () => clients.writer.incr(clients.key).then(() => {}),
      () => errors.writer++,
    ),
    loop(
      () => read(() => clients.plain.get(clients.key), plainReads),
      () => errors.plain++,
    ),
    loop(
      async () => {
        if (!stats().invalidationChannelUp) downAt.push(performance.now())
        await read(
          () => clients.heatsink.get(clients.key),
          heatsinkReads,
          () => stats().l1Hits,
        )
      },
      () => errors.heatsink++,
    ),
  ]
  return {
    /** Stops every loop and measures the run against `switchedAt`, when the new primary became known. */
    async stop(switchedAt: number): Promise<FailoverFigures> {
      running = false
      await Promise.all(loops)
      return {
        heatsinkReads: heatsinkReads.length,
        heatsinkL1Hits: heatsinkReads.filter((read) => read.fromL1).length,
        ...staleFigures(staleAges(plainReads, heatsinkReads), switchedAt),
        plainRegressions: regressions(plainReads),
        heatsinkRegressions: regressions(heatsinkReads),
        heatsinkErrors: errors.heatsink,
        plainErrors: errors.plain,
        writerErrors: errors.writer,
        l1BackMs: l1Back(heatsinkReads, downAt, switchedAt),
      }
    },
  }
}

/**
 * How far behind the plain reader each read of `checked` was: for a read that returned less than the plain
 * reader had seen before it started, the time from the end of the plain read that first saw a newer value to
 * its start. A value the plain reader later saw fall back (Redis lost the writes above it) does not count:
 * only what survived is a floor.
 */
export function staleAges(plain: readonly Read[], checked: readonly Read[]): { read: Read; ageMs: number }[] {
  const survived: boolean[] = []
  let lowestAfter = Number.POSITIVE_INFINITY
  for (let index = plain.length - 1; index >= 0; index--) {
    const value = plain[index]?.value ?? 0
    survived[index] = value <= lowestAfter
    lowestAfter = Math.min(lowestAfter, value)
  }
  // The plain loop is sequential, so its reads end in order: the floor before a time is a prefix maximum.
  const floors: number[] = []
  plain.forEach((seen, index) => {
    const previous = floors[index - 1] ?? Number.NEGATIVE_INFINITY
    floors[index] = survived[index] ? Math.max(previous, seen.value) : previous
  })
  const firstIndex = (count: number, below: (index: number) => boolean): number => {
    let low = 0
    let high = count
    while (low < high) {
      const middle = (low + high) >> 1
      if (below(middle)) low = middle + 1
      else high = middle
    }
    return low
  }
  const stale: { read: Read; ageMs: number }[] = []
  for (const read of checked) {
    const before = firstIndex(plain.length, (index) => (plain[index]?.end ?? 0) < read.start)
    if (read.value >= (floors[before - 1] ?? Number.NEGATIVE_INFINITY)) continue
    const newer = firstIndex(before, (index) => (floors[index] ?? 0) <= read.value)
    stale.push({ read, ageMs: read.start - (plain[newer]?.end ?? read.start) })
  }
  return stale
}

function staleFigures(stale: readonly { read: Read; ageMs: number }[], switchedAt: number) {
  const before = stale.filter((one) => one.read.start < switchedAt)
  const after = stale.filter((one) => one.read.start >= switchedAt)
  const longest = (ones: typeof stale) => Math.round(Math.max(0, ...ones.map((one) => one.ageMs)) * 100) / 100
  return {
    staleBeforeSwitch: before.length,
    staleAfterSwitch: after.length,
    maxStaleMsBeforeSwitch: longest(before),
    maxStaleMsAfterSwitch: longest(after),
  }
}

function regressions(reads: readonly Read[]): number {
  return reads.filter((read, index) => index > 0 && read.value < (reads[index - 1]?.value ?? 0)).length
}

function l1Back(reads: readonly Read[], downAt: readonly number[], switchedAt: number): number | undefined {
  const lastDown = downAt.reduce((latest, at) => Math.max(latest, at), switchedAt)
  const back = reads.find((read) => read.fromL1 && read.start > lastDown)
  return back === undefined ? undefined : Math.round(back.start - switchedAt)
}
