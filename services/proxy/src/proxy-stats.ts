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
  readonly commands = new Map<string, Tally>()
  clientsAccepted = 0
  clientsRejected = 0
  protocolErrors = 0
  outputOverflows = 0
  /** Requests answered from L1 with no backend round trip. */
  served = 0
  /** Of those, the reads of one key, by key (bounded like commands). */
  readonly servedByKey = new Map<string, Tally>()

  countServed(key: string): void {
    this.served++
    count(this.servedByKey, key)
  }

  countCommand(name: string): void {
    count(this.commands, name)
  }
}

/** A count kept in an object of its own, so counting once more is one map lookup, not a lookup and a store. */
export interface Tally {
  count: number
}

// Bounded, because names and keys are whatever clients send.
const MAX_TALLIES = 1024

function count(tallies: Map<string, Tally>, name: string): void {
  const tally = tallies.get(name)
  if (tally !== undefined) tally.count++
  else if (tallies.size < MAX_TALLIES) tallies.set(name, { count: 1 })
}
