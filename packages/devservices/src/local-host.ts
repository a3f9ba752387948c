// Only these name this machine for certain; any other name could resolve to a shared server we must not shadow.
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]'])

/** Whether a URL's hostname names this machine, so a private server may stand in for a missing one. */
export function isLocalHost(hostname: string): boolean {
  return LOCAL_HOSTS.has(hostname.toLowerCase())
}

/** The hostname as a socket address: URL hostnames keep IPv6 brackets, `net.connect` wants them off. */
export function socketHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname
}
