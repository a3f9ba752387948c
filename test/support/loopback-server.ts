import { createServer, type Server, type Socket } from 'node:net'

/** A TCP server on a free loopback port, each connection handed to `accept`; resolves once it listens. */
export async function listenOnLoopback(
  accept: (client: Socket) => void,
): Promise<{ server: Server; port: number }> {
  const server = createServer(accept)
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1' }, resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('no TCP address')
  return { server, port: address.port }
}
