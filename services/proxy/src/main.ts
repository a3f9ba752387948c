import { readFileSync } from 'node:fs'
import { pino } from 'pino'
import { loadProxyConfig } from './config.js'
import { ConfigError } from './errors.js'
import { createMetricsServer } from './metrics-server.js'
import { createProxy } from './proxy.js'

// The process entry: `node services/proxy/dist/main.js`, configured by environment variables (docs/operations.md).

let config: ReturnType<typeof loadProxyConfig>
try {
  config = loadProxyConfig(process.env)
} catch (error) {
  if (!(error instanceof ConfigError)) throw error
  // Before a logger exists; one readable line per bad variable is what the operator needs.
  process.stderr.write(`heatsink proxy: ${error.message}\n`)
  process.exit(2)
}

const log = pino({ name: 'heatsink-proxy', level: config.logLevel })
const { proxy, port } = await createProxy({
  backend: config.backend,
  cluster: config.cluster,
  backendTls:
    config.backendTlsCaFile === undefined ? undefined : { ca: readFileSync(config.backendTlsCaFile) },
  port: config.port,
  host: config.host,
  passwords: config.passwords,
  sharedConnections: config.sharedConnections,
  maxClients: config.maxClients,
  clientOutputLimitBytes: config.clientOutputLimitBytes,
  heatsink: {
    namespace: config.namespace,
    agentId: config.agentId,
    registryKey: config.registryKey,
    windowMs: config.windowMs,
    log: log.child({ component: 'agent' }),
  },
}).catch((error: unknown) => {
  log.fatal({ err: error }, 'start failed')
  process.exit(1)
})
const metrics = createMetricsServer(proxy)
metrics.listen(config.metricsPort, config.host)
log.info(
  {
    port,
    host: config.host,
    metricsPort: config.metricsPort,
    agentId: config.agentId,
    auth: config.passwords.size > 0,
  },
  'listening',
)
proxy.agent.ready().then(
  () => log.info('agent ready'),
  (error: unknown) => log.warn({ err: error }, 'agent not ready yet; serving pass-through meanwhile'),
)

let stopping = false
function shutdown(signal: NodeJS.Signals): void {
  if (stopping) {
    log.warn({ signal }, 'second signal: exiting without a clean stop')
    process.exit(1)
  }
  stopping = true
  const timeoutMs = config.shutdownTimeoutMs
  log.info({ signal, timeoutMs, clients: proxy.clients }, 'draining')
  // Whatever clients or a stalled Redis do, the process ends by this deadline.
  setTimeout(() => {
    log.error({ timeoutMs }, 'drain did not finish before the shutdown deadline; exiting')
    process.exit(1)
  }, timeoutMs).unref()
  metrics.close()
  // Clients get most of the deadline to take their last replies; the agent's close has the rest.
  proxy.close(Math.max(0, timeoutMs - 2000)).then(
    () => {
      log.info('stopped')
      process.exit(0)
    },
    (error: unknown) => {
      log.error({ err: error }, 'stop failed')
      process.exit(1)
    },
  )
}
process.on('SIGTERM', shutdown)
process.on('SIGINT', shutdown)
