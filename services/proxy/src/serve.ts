import { readFileSync } from 'node:fs'
import closeWithGrace, { type Signals } from 'close-with-grace'
import { pino } from 'pino'
import type { ProxyConfig } from './config.js'
import { createMetricsServer } from './metrics-server.js'
import { createProxy } from './proxy.js'

// close-with-grace's signals besides SIGTERM and SIGINT: left to Node's defaults, as before.
const OTHER_SIGNALS = 'SIGHUP SIGQUIT SIGILL SIGTRAP SIGABRT SIGBUS SIGFPE SIGSEGV SIGUSR2'.split(' ')

/**
 * Runs one proxy process until SIGTERM: the RESP server, its agent and the metrics server. Worker `worker` of a
 * multi-process proxy is its own agent (`<agentId>-<worker>`) with its metrics on the metrics port plus `worker`;
 * the RESP port is shared by every worker (node:cluster hands each connection to one of them).
 */
export async function serve(config: ProxyConfig, worker?: number): Promise<void> {
  const log = pino({ name: 'heatsink-proxy', level: config.logLevel })
  const { proxy, port } = await createProxy({
    backend: config.backend,
    sentinelPassword: config.sentinelPassword,
    cluster: config.cluster,
    backendTls:
      config.backendTlsCaFile === undefined ? undefined : { ca: readFileSync(config.backendTlsCaFile) },
    port: config.port,
    host: config.host,
    passwords: config.passwords,
    sharedConnections: config.sharedConnections,
    maxClients: config.maxClients,
    clientOutputLimitBytes: config.clientOutputLimitBytes,
    control: config.control,
    controlCluster: config.controlCluster,
    heatsink: {
      namespace: config.namespace,
      agentId: worker === undefined ? config.agentId : `${config.agentId}-${worker}`,
      registryKey: config.registryKey,
      windowMs: config.windowMs,
      l1: config.l1,
      log: log.child({ component: 'agent' }),
    },
  }).catch((error: unknown) => {
    log.fatal({ err: error }, 'start failed')
    process.exit(1)
  })
  const metrics = createMetricsServer(proxy)
  const metricsPort = config.metricsPort + (worker ?? 0)
  metrics.listen(metricsPort, config.host)
  log.info(
    {
      port,
      host: config.host,
      metricsPort: config.metricsPort,
      agentId: worker === undefined ? config.agentId : `${config.agentId}-${worker}`,
      auth: config.passwords.size > 0,
    },
    'listening',
  )
  proxy.agent.ready().then(
    () => log.info('agent ready'),
    (error: unknown) => log.warn({ err: error }, 'agent not ready yet; serving pass-through meanwhile'),
  )

  // close-with-grace drains once on SIGTERM or SIGINT, exits 1 at once on a second signal, and exits 1 if the drain
  // is unfinished at HEATSINK_SHUTDOWN_TIMEOUT_MS, whatever clients or a stalled Redis do. The other events it
  // listens to by default keep Node's behaviour: other signals, and an uncaught error, which ends the process at
  // once with its stack trace instead of starting a drain.
  const timeoutMs = config.shutdownTimeoutMs
  closeWithGrace(
    {
      delay: timeoutMs,
      logger: false,
      skip: [...(OTHER_SIGNALS as Signals[]), 'uncaughtException', 'unhandledRejection', 'beforeExit'],
      onSecondSignal: (signal) => log.warn({ signal }, 'second signal: exiting without a clean stop'),
      onTimeout: () => log.error({ timeoutMs }, 'drain did not finish before the shutdown deadline; exiting'),
    },
    async ({ signal }) => {
      log.info({ signal, timeoutMs, clients: proxy.clients }, 'draining')
      metrics.close()
      try {
        // Clients get most of the deadline to take their last replies; the agent's close has the rest.
        await proxy.close(Math.max(0, timeoutMs - 2000))
      } catch (error) {
        log.error({ err: error }, 'stop failed')
        throw error
      }
      log.info('stopped')
    },
  )
}
