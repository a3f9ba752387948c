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
async function shutdown(signal: NodeJS.Signals): Promise<void> {
  if (stopping) {
    log.warn({ signal }, 'second signal: exiting without a clean stop')
    process.exit(1)
  }
  stopping = true
  log.info({ signal }, 'stopping')
  await aggregator.stop()
  log.info('stopped')
  process.exit(0)
}
process.on('SIGTERM', (signal) => void shutdown(signal))
process.on('SIGINT', (signal) => void shutdown(signal))

try {
  await aggregator.start()
} catch (error) {
  log.fatal({ err: error }, 'start failed')
  await aggregator.stop()
  process.exit(1)
}
