import { readFileSync } from 'node:fs'
import { pino } from 'pino'
import type { ProxyConfig } from './config.js'
import { createMetricsServer } from './metrics-server.js'
import { createProxy } from './proxy.js'

/**
 * Runs one proxy process until SIGTERM: the RESP server, its agent and the metrics server. Worker `worker` of a
 * multi-process proxy is its own agent (`<agentId>-<worker>`) with its metrics on the metrics port plus `worker`;
 * the RESP port is shared by every worker (node:cluster hands each connection to one of them).
 */
export async function serve(config: ProxyConfig, worker?: number): Promise<void> {
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
      agentId: worker === undefined ? config.agentId : `${config.agentId}-${worker}`,
      registryKey: config.registryKey,
      windowMs: config.windowMs,
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
}
