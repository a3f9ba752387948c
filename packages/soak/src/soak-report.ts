import { type MemorySample, slopeMbPerMinute } from './slope.js'
import type { ProcessCounters, SoakProcess } from './soak-process.js'

/**
 * What a soak must show to pass (a run that misses one exits 1): memory that does not grow (a slope of at most 1 MB
 * a minute), no error at all, under 1% of reports dropped, and at least 15,000 commands a second served.
 */
export const AIMS = {
  maxSlopeMbPerMinute: 1,
  maxErrors: 0,
  maxDroppedShare: 0.01,
  minCommandsPerSecond: 15_000,
}

const mb = (bytes: number | null | undefined) =>
  bytes == null ? '     -' : (bytes / 1024 / 1024).toFixed(1).padStart(6)
const signed = (value: number | null) => (value === null ? '     -' : value.toFixed(2).padStart(6))

/** One line per sampling round: each process's RSS and heap, in MB. */
export function sampleLine(
  atSeconds: number,
  processes: readonly SoakProcess[],
  latest: Map<string, MemorySample>,
): string {
  const cells = processes.map((p) => {
    const sample = latest.get(p.name)
    return `${p.name} ${mb(sample?.rssBytes)}/${mb(sample?.heapBytes)}`
  })
  return `t=${String(Math.round(atSeconds)).padStart(5)}s  rss/heap MB  ${cells.join('  ')}`
}

/** Everything the closing summary needs. */
export interface SoakOutcome {
  readonly processes: readonly SoakProcess[]
  readonly samples: Map<string, MemorySample[]>
  readonly counters: Map<string, ProcessCounters>
  readonly warmUpSeconds: number
  /** Commands completed by the agents over the measured part (after warm-up), per second. */
  readonly commandsPerSecond: number
  readonly notes: readonly string[]
  /** Processes that exited on their own before the end. */
  readonly exitedEarly: readonly string[]
}

/** The closing table and the verdict; returns the aims that were missed (empty: the run passed). */
export function printSummary(outcome: SoakOutcome, print: (line: string) => void = console.log): string[] {
  const missed: string[] = []
  print('')
  print(
    `after ${outcome.warmUpSeconds} s of warm-up: least-squares slopes through each minute's RSS peak and heap floor`,
  )
  print('process         role         rss start  rss end  rss MB/min  heap MB/min')
  for (const p of outcome.processes) {
    const all = outcome.samples.get(p.name) ?? []
    const measured = all.filter((s) => s.atSeconds >= outcome.warmUpSeconds)
    const rssSlope = slopeMbPerMinute(measured, (s) => s.rssBytes, 'peak')
    const heapSlope = slopeMbPerMinute(measured, (s) => s.heapBytes, 'floor')
    print(
      `${p.name.padEnd(15)} ${p.role.padEnd(10)} ${mb(measured[0]?.rssBytes)}   ${mb(measured.at(-1)?.rssBytes)}      ${signed(rssSlope)}       ${signed(heapSlope)}`,
    )
    if (rssSlope === null) missed.push(`${p.name}: too few minutes after warm-up for a slope (3 needed)`)
    else if (rssSlope > AIMS.maxSlopeMbPerMinute)
      missed.push(`${p.name}: RSS grows ${rssSlope.toFixed(2)} MB/min`)
    if (outcome.exitedEarly.includes(p.name)) missed.push(`${p.name}: exited during the run`)
  }
  const total = (field: keyof ProcessCounters) =>
    [...outcome.counters.values()].reduce((sum, counters) => sum + counters[field], 0)
  const sent = total('reportsSent')
  const dropped = total('reportsDropped')
  const droppedShare = sent + dropped === 0 ? 0 : dropped / (sent + dropped)
  print('')
  print(`commands/s (agents, after warm-up): ${Math.round(outcome.commandsPerSecond)}`)
  print(`commands completed: ${total('commands')}; shed (rate not kept up): ${total('shed')}`)
  print(`errors: ${total('errors')}`)
  print(`reports: ${sent} sent, ${dropped} dropped (${(droppedShare * 100).toFixed(2)}%)`)
  for (const note of outcome.notes) print(note)
  if (total('errors') > AIMS.maxErrors) missed.push(`${total('errors')} errors`)
  if (droppedShare >= AIMS.maxDroppedShare)
    missed.push(`${(droppedShare * 100).toFixed(2)}% of reports dropped`)
  if (outcome.commandsPerSecond < AIMS.minCommandsPerSecond) {
    missed.push(`${Math.round(outcome.commandsPerSecond)} commands/s, below ${AIMS.minCommandsPerSecond}`)
  }
  print('')
  print(missed.length === 0 ? 'soak: every aim met' : `soak: aims missed: ${missed.join('; ')}`)
  return missed
}
