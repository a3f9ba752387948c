import { parseArgs } from 'node:util'

/** What one soak run does; every field has a command-line flag of the same name (`--minutes=30`). */
export interface SoakOptions {
  /** Length of the run. */
  readonly minutes: number
  /** Agent processes. */
  readonly agents: number
  /** Commands per second over all agents, background and hot keys together. */
  readonly rate: number
  /** Seconds between memory samples. */
  readonly sampleSeconds: number
}

const DEFAULTS: SoakOptions = { minutes: 30, agents: 4, rate: 18_000, sampleSeconds: 5 }

const NAMES = Object.keys(DEFAULTS) as (keyof SoakOptions)[]

/**
 * Reads `--name=value` (or `--name value`) flags with node:util's parseArgs, strict, so a misspelt or valueless
 * flag is an error naming it; a lone `--` before them (as `pnpm soak -- --minutes=3` may pass on) is skipped.
 */
export function parseSoakOptions(argv: readonly string[]): SoakOptions {
  const args = argv[0] === '--' ? argv.slice(1) : [...argv]
  let values: Partial<Record<keyof SoakOptions, string>>
  try {
    values = parseArgs({
      args,
      options: Object.fromEntries(NAMES.map((name) => [name, { type: 'string' as const }])),
      strict: true,
      allowPositionals: false,
    }).values as typeof values
  } catch (error) {
    throw new Error(`${(error as Error).message}; expected any of ${NAMES.map((k) => `--${k}=N`).join(' ')}`)
  }
  const options: Record<string, number> = { ...DEFAULTS }
  for (const name of NAMES) {
    const text = values[name]
    if (text === undefined) continue
    const value = Number(text)
    if (!(value > 0) || !Number.isFinite(value))
      throw new Error(`--${name} must be a positive number, got '${text}'`)
    options[name] = value
  }
  if (!Number.isInteger(options.agents))
    throw new Error(`--agents must be a whole number, got ${options.agents}`)
  return options as unknown as SoakOptions
}

/**
 * The samples before this are warm-up (JIT, pools, caches filling) and left out of the slopes: a third of the run,
 * at most two minutes.
 */
export function warmUpSeconds(options: SoakOptions): number {
  return Math.min(120, (options.minutes * 60) / 3)
}
