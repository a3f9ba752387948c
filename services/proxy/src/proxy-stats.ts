import { Histogram } from 'prom-client'

/** The proxy's own counters, read by /metrics and by tests. */
export class ProxyStats {
  /**
   * Round trips to Redis (request written to reply complete), one request in 32 timed: a sample is enough for
   * the distribution, and the request path then pays no clock read.
   */
  readonly backendLatency = new Histogram({
    name: 'heatsink_proxy_backend_latency_seconds',
    help: 'Round trip of a request to the backend Redis, from one request in 32',
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1],
    registers: [],
  })
  /** Requests by command name (lower case); unknown names are counted under their own name, up to a bound. */
  readonly commands = new Map<string, number>()
  clientsAccepted = 0
  clientsRejected = 0
  protocolErrors = 0
  outputOverflows = 0
  /** Requests answered from L1 with no backend round trip. */
  served = 0
  /** Of those, the reads of one key, by key (bounded like commands). */
  readonly servedByKey = new Map<string, number>()

  countServed(key: string): void {
    this.served++
    const count = this.servedByKey.get(key)
    if (count !== undefined) this.servedByKey.set(key, count + 1)
    else if (this.servedByKey.size < 1024) this.servedByKey.set(key, 1)
  }

  countCommand(name: string): void {
    const count = this.commands.get(name)
    if (count !== undefined) this.commands.set(name, count + 1)
    // Bounded, because names are whatever clients send.
    else if (this.commands.size < 1024) this.commands.set(name, 1)
  }
}
