// What this touches of an ioredis Redis or Cluster, typed structurally so that the package needs no ioredis.
interface Emitter {
  on(event: string, listener: (...args: never[]) => void): unknown
}
interface Connector {
  connect(...args: unknown[]): Promise<unknown>
  stream?: Emitter
}
interface Client extends Emitter {
  readonly isCluster?: boolean
  connector?: Connector
  nodes?(role: 'all'): object[]
}

const guardedClients = new WeakSet<object>()
const guardedSockets = new WeakSet<object>()

/**
 * Keeps a listener on the 'error' event of every socket an ioredis client opens, for as long as the socket lives.
 * ioredis listens for a socket's errors with once() (ioredis#961, never merged): a TLS socket whose handshake
 * fails can emit a second error, such as the server's alert arriving after the client rejected its certificate,
 * and with no listener left that error is thrown out of the process. ioredis still handles the first error of
 * each socket as before; later ones, on a socket that is already being closed, are dropped.
 *
 * A Cluster's node clients are covered as the cluster adds them. Returns the client.
 */
export function keepSocketErrorsHandled<T extends object>(client: T): T {
  if (guardedClients.has(client)) return client
  guardedClients.add(client)
  const redis = client as unknown as Client
  if (redis.isCluster === true) {
    redis.on('+node', (node: object) => keepSocketErrorsHandled(node))
    for (const node of redis.nodes?.('all') ?? []) keepSocketErrorsHandled(node)
    return client
  }
  const connector = redis.connector
  if (connector === undefined) return client
  const connect = connector.connect
  connector.connect = function (this: Connector, ...args: unknown[]) {
    return connect.apply(this, args).then((stream) => {
      guardSocket(stream)
      return stream
    })
  }
  // A client that is not lazy started connecting in its constructor: its connector creates the socket on the
  // next tick, and no error can reach the socket before I/O, after every tick queued now.
  process.nextTick(() => guardSocket(connector.stream))
  return client
}

function guardSocket(stream: unknown): void {
  if (typeof stream !== 'object' || stream === null || guardedSockets.has(stream)) return
  if (typeof (stream as Partial<Emitter>).on !== 'function') return
  guardedSockets.add(stream)
  ;(stream as Emitter).on('error', ignore)
}

function ignore(): void {}
