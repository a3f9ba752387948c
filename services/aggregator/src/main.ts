#!/usr/bin/env node
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

let stopping = false
/** Stops the replica and exits with `code`, or with 1 once HEATSINK_SHUTDOWN_TIMEOUT_MS has passed. */
async function stopAndExit(code: number): Promise<never> {
  stopping = true
  const timeoutMs = config.shutdownTimeoutMs
  // Whatever clients or a stalled Redis or Postgres do, the process ends by this deadline, before Kubernetes'
  // SIGKILL at the end of its grace period: the exit code and the last log line stay ours.
  setTimeout(() => {
    log.error({ timeoutMs }, 'stop did not finish before the shutdown deadline; exiting')
    process.exit(1)
  }, timeoutMs)
  await aggregator.stop()
  log.info('stopped')
  process.exit(code)
}

function shutdown(signal: NodeJS.Signals): void {
  if (stopping) {
    log.warn({ signal }, 'second signal: exiting without a clean stop')
    process.exit(1)
  }
  log.info({ signal, timeoutMs: config.shutdownTimeoutMs }, 'stopping')
  void stopAndExit(0)
}
process.on('SIGTERM', shutdown)
process.on('SIGINT', shutdown)

try {
  await aggregator.start()
} catch (error) {
  log.fatal({ err: error }, 'start failed')
  await stopAndExit(1)
}
