#!/usr/bin/env node
import closeWithGrace, { type Signals } from 'close-with-grace'
import { pino } from 'pino'
import { createAggregator } from './aggregator.js'
import { loadConfig } from './config.js'
import { ConfigError } from './errors.js'

// The process entry: `pnpm --filter @heatsink/aggregator start` after the build runs this from dist/.

let config: ReturnType<typeof loadConfig>
try {
  config = loadConfig(process.env)
} catch (error) {
  if (!(error instanceof ConfigError)) throw error
  // Before a logger exists; one readable line per bad variable is what the operator needs.
  process.stderr.write(`heatsink aggregator: ${error.message}\n`)
  process.exit(2)
}

const log = pino({ name: 'heatsink-aggregator', level: config.logLevel })
const aggregator = createAggregator(config, { log })

// close-with-grace runs one clean stop on SIGTERM or SIGINT, exits 1 at once on a second signal, and exits 1 if the
// stop is unfinished at HEATSINK_SHUTDOWN_TIMEOUT_MS: whatever clients or a stalled Redis or Postgres do, the
// process ends by then, before Kubernetes' SIGKILL, so the exit code and the last log line stay ours. The other
// events it listens to by default are skipped and keep Node's behaviour: other signals, and an uncaught error,
// which still ends the process at once with its stack trace instead of starting a stop.
const OTHER_SIGNALS = 'SIGHUP SIGQUIT SIGILL SIGTRAP SIGABRT SIGBUS SIGFPE SIGSEGV SIGUSR2'.split(' ')
let startError: unknown
const shutdown = closeWithGrace(
  {
    delay: config.shutdownTimeoutMs,
    logger: false,
    skip: [...(OTHER_SIGNALS as Signals[]), 'uncaughtException', 'unhandledRejection', 'beforeExit'],
    onSecondSignal: (signal) => log.warn({ signal }, 'second signal: exiting without a clean stop'),
    onTimeout: (timeoutMs) =>
      log.error({ timeoutMs }, 'stop did not finish before the shutdown deadline; exiting'),
  },
  async ({ signal }) => {
    if (signal !== undefined) log.info({ signal, timeoutMs: config.shutdownTimeoutMs }, 'stopping')
    try {
      await aggregator.stop()
    } catch (error) {
      log.error({ err: error }, 'stop failed')
      throw error
    }
    log.info('stopped')
    // Rejecting makes close-with-grace exit 1: a replica that could not start is a failure however it stopped.
    if (startError !== undefined) throw startError
  },
)

try {
  await aggregator.start()
} catch (error) {
  log.fatal({ err: error }, 'start failed')
  startError = error
  shutdown.close()
}
