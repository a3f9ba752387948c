/** The proxy's own counters, read by /metrics and by tests. */
export class ProxyStats {
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
