import { parseArgs } from 'node:util'

/** What the quickstart's command line says. */
export interface QuickstartOptions {
  /** Seconds until the run stops on its own; undefined runs until Ctrl-C. */
  readonly seconds: number | undefined
}

/**
 * Reads `--seconds=N` with node:util's parseArgs, strict, so a misspelt or valueless flag is an error naming it
 * instead of a run that never stops; a lone `--` before it (as `pnpm --filter ... start -- --seconds=20` may pass
 * on) is skipped.
 */
export function parseQuickstartOptions(argv: readonly string[]): QuickstartOptions {
  const args = argv[0] === '--' ? argv.slice(1) : [...argv]
  const { values } = parseArgs({
    args,
    options: { seconds: { type: 'string' } },
    strict: true,
    allowPositionals: false,
  })
  if (values.seconds === undefined) return { seconds: undefined }
  const seconds = Number(values.seconds)
  if (!(seconds > 0) || !Number.isFinite(seconds)) {
    throw new Error(`--seconds must be a positive number, got '${values.seconds}'`)
  }
  return { seconds }
}
