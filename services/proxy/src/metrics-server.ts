import { createServer, type Server } from 'node:http'
import { Counter, Gauge, Registry } from 'prom-client'
import type { RespProxy } from './proxy.js'

/**
 * `/metrics` (Prometheus text) and `/healthz` on a port of their own, apart from the RESP port. Every figure is
 * read from the proxy's and the agent's counters at scrape time, so the request path updates no metric object.
 */
export function createMetricsServer(proxy: RespProxy): Server {
  const registry = new Registry()
  const stats = proxy.stats
  registry.registerMetric(stats.backendLatency)
  new Gauge({
    name: 'heatsink_proxy_clients',
    help: 'Client connections open',
    registers: [registry],
    collect() {
      this.set(proxy.clients)
    },
  })
  new Gauge({
    name: 'heatsink_proxy_backend_connections',
    help: 'Connections open to the backend Redis (shared and dedicated)',
    registers: [registry],
    collect() {
      this.set(proxy.backendConnections)
    },
  })
  new Gauge({
    name: 'heatsink_proxy_agent_l1_bytes',
    help: "Bytes held by the agent's L1 (estimated; bounded by HEATSINK_L1_MAX_MB)",
    registers: [registry],
    collect() {
      this.set(proxy.agent.stats().l1Bytes)
    },
  })
  const totals: Array<[string, string, () => number]> = [
    ['heatsink_proxy_clients_accepted_total', 'Client connections accepted', () => stats.clientsAccepted],
    [
      'heatsink_proxy_clients_rejected_total',
      'Client connections refused at the connection limit',
      () => stats.clientsRejected,
    ],
    [
      'heatsink_proxy_protocol_errors_total',
      'Clients disconnected for a malformed request',
      () => stats.protocolErrors,
    ],
    [
      'heatsink_proxy_output_overflows_total',
      'Clients disconnected past the output-buffer limit',
      () => stats.outputOverflows,
    ],
    [
      'heatsink_proxy_l1_served_total',
      'Requests answered from L1 without a backend round trip',
      () => stats.served,
    ],
    ['heatsink_proxy_agent_l1_hits_total', "The agent's L1 hits", () => proxy.agent.stats().l1Hits],
    [
      'heatsink_proxy_agent_l1_misses_total',
      "The agent's L1 misses of local_cache keys",
      () => proxy.agent.stats().l1Misses,
    ],
    [
      'heatsink_proxy_agent_l1_too_large_total',
      "Fills of local_cache keys too large for the agent's L1 (their reads go to Redis)",
      () => proxy.agent.stats().l1TooLarge,
    ],
    [
      'heatsink_proxy_agent_l1_fills_abandoned_total',
      'L1 fills given up (tracking connection lost, or no reply within l1.fillTimeoutMs); their reads went to Redis',
      () => proxy.agent.stats().l1FillsAbandoned,
    ],
  ]
  for (const [name, help, read] of totals) {
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset()
        this.inc(read())
      },
    })
  }
  new Counter({
    name: 'heatsink_proxy_commands_total',
    help: 'Requests by command (lower case)',
    labelNames: ['command'],
    registers: [registry],
    collect() {
      this.reset()
      for (const [command, tally] of stats.commands) this.inc({ command }, tally.count)
    },
  })
  new Counter({
    name: 'heatsink_proxy_hot_key_l1_served_total',
    help: 'Reads of each hot key answered from L1',
    labelNames: ['key'],
    registers: [registry],
    collect() {
      this.reset()
      for (const [key, tally] of stats.servedByKey) this.inc({ key }, tally.count)
    },
  })

  return createServer((request, response) => {
    if (request.url === '/metrics') {
      registry.metrics().then(
        (body) => {
          response.writeHead(200, { 'content-type': registry.contentType })
          response.end(body)
        },
        (error: Error) => {
          response.writeHead(500).end(error.message)
        },
      )
      return
    }
    if (request.url === '/healthz') {
      const ready = proxy.ready
      // A Sentinel backend mid-failover: no primary answers, writes would fail.
      const status = ready ? 'ok' : proxy.primaryReachable ? 'starting' : 'no-primary'
      response.writeHead(ready ? 200 : 503, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ status, clients: proxy.clients }))
      return
    }
    response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}')
  })
}
