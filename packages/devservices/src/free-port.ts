import { createServer } from 'node:net'

// Ports below the kernel's ephemeral range (32768–60999 here): a port the kernel hands out for `listen(0)` can be
// taken as the source port of any outgoing connection before the child process binds it (a CI run lost an
// aggregator to EADDRINUSE that way). runtest's windows use 20000–26400, so these start above them.
const FIRST_PORT = 27_000
const PORTS = 5_700
const TRIES = 50

/** A TCP port on `host` that nothing listens on right now, outside the range outgoing connections draw from. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < TRIES; attempt++) {
    const port = FIRST_PORT + Math.floor(Math.random() * PORTS)
    if (await isPortFree(port, host)) return port
  }
  return kernelPort(host)
}

function kernelPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.once('error', reject)
    server.listen({ port: 0, host, exclusive: true }, () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => (port > 0 ? resolve(port) : reject(new Error(`no port assigned on ${host}`))))
    })
  })
}

/** Whether `port` on `host` can be bound right now. */
export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer()
    server.unref()
    server.once('error', () => resolve(false))
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)))
  })
}
