import type { HeatsinkHandle } from '@heatsink/agent'

/** One read of the counter: when it started and ended (performance.now()), what it returned, and from where. */
interface Read {
  readonly start: number
  readonly end: number
  readonly value: number
  readonly fromL1: boolean
}

/** One INCR of the writer: when it was answered, and the value it made. */
interface Write {
  readonly end: number
  readonly value: number
}

/** The clients of one scenario; any ioredis Redis or Cluster, plain or Heatsink's. */
export interface TrafficClients {
  readonly key: string
  readonly writer: { incr(key: string): Promise<number> }
  /**
   * Writes through the door under test when its reads and writes are apart (the proxy), to another key of the
   * counter's slot: the writes whose resumption is measured. (With the counter itself written through the proxy as
   * fast as it answers, its L1 did not serve 50 reads in 10 s: every write invalidates what it holds.)
   */
  readonly doorWriter?: { incr(key: string): Promise<number> }
  /** The reference: a plain ioredis client with the application's options. */
  readonly plain: { get(key: string): Promise<string | null> }
  /** Another plain client like it, measured against it as Heatsink is: how far plain ioredis falls behind itself. */
  readonly secondPlain?: { get(key: string): Promise<string | null> }
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
  /**
   * Of the reads after the switch, those answered from L1: Heatsink's own. The others went through the
   * application's connection, to whichever server the sentinel it asked named (as the plain reader's do).
   */
  readonly staleFromL1AfterSwitch: number
  readonly maxStaleMsFromL1AfterSwitch: number
  /** With `secondPlain`: its longest staleness after the switch against the reference, as for Heatsink's reads. */
  readonly secondPlainMaxStaleMsAfterSwitch?: number
  /** Plain reads lower than the plain reader's previous one: writes Redis lost in the failover. */
  readonly plainRegressions: number
  readonly heatsinkRegressions: number
  readonly heatsinkErrors: number
  readonly plainErrors: number
  /** The distinct errors each reader saw, numbers masked (ports, slots, timings), so the two compare. */
  readonly heatsinkErrorKinds: readonly string[]
  readonly plainErrorKinds: readonly string[]
  readonly writerErrors: number
  /**
   * From the switch to the first INCR answered after it and after the last error, of the door's writer when
   * there is one, of the writer otherwise.
   */
  readonly writesResumedMs: number
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
  const secondPlainReads: Read[] = []
  const heatsinkReads: Read[] = []
  const writes: Write[] = []
  const downAt: number[] = []
  const doorWrites: Write[] = []
  const writeFailedAt: number[] = []
  const errors = { heatsink: 0, plain: 0, writer: 0, secondPlain: 0 }
  const errorKinds = { heatsink: new Set<string>(), plain: new Set<string>() }
  const kindOf = (error: unknown) =>
    String(error instanceof Error ? error.message : error).replace(/\d+/g, 'N')
  const turn = () => new Promise((resolve) => setImmediate(resolve))
  const loop = async (step: () => Promise<void>, onError: (error: unknown) => void) => {
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
  const secondPlain = clients.secondPlain
  const loops = [
    loop(
      async () => {
        const value = await clients.writer.incr(clients.key)
        writes.push({ end: performance.now(), value })
      },
      () => {
        errors.writer++
        if (clients.doorWriter === undefined) writeFailedAt.push(performance.now())
      },
    ),
    ...(clients.doorWriter === undefined
      ? []
      : [
          loop(
            async () => {
              const value = await clients.doorWriter?.incr(`${clients.key}:door`)
              doorWrites.push({ end: performance.now(), value: value ?? 0 })
            },
            () => writeFailedAt.push(performance.now()),
          ),
        ]),
    ...(secondPlain === undefined
      ? []
      : [
          loop(
            () => read(() => secondPlain.get(clients.key), secondPlainReads),
            () => errors.secondPlain++,
          ),
        ]),
    loop(
      () => read(() => clients.plain.get(clients.key), plainReads),
      (error) => {
        errors.plain++
        errorKinds.plain.add(kindOf(error))
      },
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
      (error) => {
        errors.heatsink++
        errorKinds.heatsink.add(kindOf(error))
      },
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
        ...staleFigures(staleAges(plainReads, heatsinkReads, writes), switchedAt),
        plainRegressions: regressions(plainReads),
        heatsinkRegressions: regressions(heatsinkReads),
        heatsinkErrors: errors.heatsink,
        plainErrors: errors.plain,
        heatsinkErrorKinds: [...errorKinds.heatsink],
        plainErrorKinds: [...errorKinds.plain],
        writerErrors: errors.writer,
        writesResumedMs: writesResumed(
          clients.doorWriter === undefined ? writes : doorWrites,
          writeFailedAt,
          switchedAt,
        ),
        l1BackMs: l1Back(heatsinkReads, downAt, switchedAt),
        ...(secondPlain !== undefined && {
          secondPlainMaxStaleMsAfterSwitch: staleFigures(
            staleAges(plainReads, secondPlainReads, writes),
            switchedAt,
          ).maxStaleMsAfterSwitch,
        }),
      }
    },
  }
}

/**
 * How far behind the plain reader each read of `checked` was: for a read that returned less than the plain
 * reader had seen before it started, the time from the end of the plain read that first saw a newer value to
 * its start. A value a failover lost is no floor: Redis lost it, not the reader. A value is lost when, after it
 * was read, the writer's counter or the plain reader's fell back to it or below (the promoted replica had not
 * received it). The new primary's INCRs then make the same numbers again, so a lost value is judged by the
 * fall back, never by equality with a later read: a read answered by the new primary before the writer's first
 * INCR there returns the newest value that survived, one below a number the old primary had also given.
 */
export function staleAges(
  plain: readonly Read[],
  checked: readonly Read[],
  writes: readonly Write[] = [],
): { read: Read; ageMs: number }[] {
  const fallBacks = [
    ...fallBacksOf(plain.map((read) => ({ end: read.end, value: read.value }))),
    ...fallBacksOf(writes),
  ]
  const survived = plain.map((read) =>
    fallBacks.every((fallBack) => fallBack.end <= read.end || read.value < fallBack.value),
  )
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

/** The points where a sequence of counter values fell back: after them, the counter's history was another. */
function fallBacksOf(values: readonly Write[]): Write[] {
  return values.filter((one, index) => index > 0 && one.value < (values[index - 1]?.value ?? 0))
}

function staleFigures(stale: readonly { read: Read; ageMs: number }[], switchedAt: number) {
  const before = stale.filter((one) => one.read.start < switchedAt)
  const after = stale.filter((one) => one.read.start >= switchedAt)
  const longest = (ones: typeof stale) => Math.round(Math.max(0, ...ones.map((one) => one.ageMs)) * 100) / 100
  const fromL1 = after.filter((one) => one.read.fromL1)
  return {
    staleBeforeSwitch: before.length,
    staleAfterSwitch: after.length,
    maxStaleMsBeforeSwitch: longest(before),
    maxStaleMsAfterSwitch: longest(after),
    staleFromL1AfterSwitch: fromL1.length,
    maxStaleMsFromL1AfterSwitch: longest(fromL1),
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

function writesResumed(writes: readonly Write[], failedAt: readonly number[], switchedAt: number): number {
  const lastFailure = failedAt.reduce((latest, at) => Math.max(latest, at), switchedAt)
  const resumed = writes.find((write) => write.end > lastFailure)
  return resumed === undefined ? Number.POSITIVE_INFINITY : Math.round(resumed.end - switchedAt)
}
