import { parseArgs } from 'node:util'

/** What the quickstart's command line says. */
export interface QuickstartOptions {
  /** Seconds until the run stops on its own; undefined runs until Ctrl-C. */
  readonly seconds: number | undefined
  /** Run on a private Sentinel deployment (a primary, 2 replicas, 3 sentinels) and show a failover live. */
  readonly sentinel: boolean
  /**
   * With `sentinel`: the second of the timeline at which SENTINEL FAILOVER is sent (never before the viral key is
   * mitigated, so the failover is seen to keep it mitigated).
   */
  readonly failoverAfterSeconds: number
  /** Run on a private 3-master Redis Cluster instead of REDIS_URL. */
  readonly cluster: boolean
}

/** The failover's default moment: the viral key (from +5 s) is mitigated by then, the counter (+12 s) not yet hot. */
export const DEFAULT_FAILOVER_AFTER_SECONDS = 8

/**
 * Reads `--seconds=N`, `--sentinel`, `--failover-after=N` and `--cluster` with node:util's parseArgs, strict, so a misspelt or
 * valueless flag is an error naming it instead of a run that never stops; a lone `--` before them (as
 * `pnpm --filter ... start -- --seconds=20` may pass on) is skipped.
 */
export function parseQuickstartOptions(argv: readonly string[]): QuickstartOptions {
  const args = argv[0] === '--' ? argv.slice(1) : [...argv]
  const { values } = parseArgs({
    args,
    options: {
      seconds: { type: 'string' },
      sentinel: { type: 'boolean' },
      'failover-after': { type: 'string' },
      cluster: { type: 'boolean' },
    },
    strict: true,
    allowPositionals: false,
  })
  const sentinel = values.sentinel === true
  const cluster = values.cluster === true
  if (sentinel && cluster) throw new Error('--sentinel and --cluster exclude each other: choose one')
  if (values['failover-after'] !== undefined && !sentinel) {
    throw new Error('--failover-after needs --sentinel (only a Sentinel deployment fails over)')
  }
  return {
    seconds: positive('--seconds', values.seconds),
    sentinel,
    failoverAfterSeconds:
      positive('--failover-after', values['failover-after']) ?? DEFAULT_FAILOVER_AFTER_SECONDS,
    cluster,
  }
}

function positive(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined
  const value = Number(text)
  if (!(value > 0) || !Number.isFinite(value))
    throw new Error(`${flag} must be a positive number, got '${text}'`)
  return value
}
