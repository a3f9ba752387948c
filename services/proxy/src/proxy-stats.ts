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

  countCommand(name: string): void {
    const count = this.commands.get(name)
    if (count !== undefined) this.commands.set(name, count + 1)
    // Bounded, because names are whatever clients send.
    else if (this.commands.size < 1024) this.commands.set(name, 1)
  }
}
