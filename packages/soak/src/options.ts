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

/** Reads `--name=value` flags (pnpm passes a lone `--` through, which is skipped); throws naming a bad one. */
export function parseSoakOptions(argv: readonly string[]): SoakOptions {
  const options: Record<string, number> = { ...DEFAULTS }
  for (const arg of argv) {
    if (arg === '--') continue
    const match = /^--([a-zA-Z]+)=(.*)$/.exec(arg)
    const name = match?.[1]
    if (match === null || name === undefined || !(name in DEFAULTS)) {
      throw new Error(
        `unknown argument ${arg}; expected any of ${Object.keys(DEFAULTS)
          .map((k) => `--${k}=N`)
          .join(' ')}`,
      )
    }
    const value = Number(match[2])
    if (!(value > 0) || !Number.isFinite(value))
      throw new Error(`--${name} must be a positive number, got '${match[2]}'`)
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
