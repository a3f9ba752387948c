import { createServer, type Server, type Socket } from 'node:net'
import type { ConnectionOptions } from 'node:tls'
import { type Agent, type AgentOptions, createAgent } from '@heatsink/agent'
import { DEFAULT_NAMESPACE, isSentinelUrl, keepSocketErrorsHandled } from '@heatsink/protocol'
import { Cluster, Redis } from 'ioredis'
import { type BackendAddress, parseBackendUrl } from './backend/backend-address.js'
import { BackendPool } from './backend/backend-pool.js'
import { SentinelBackend } from './backend/sentinel-backend.js'
import { ClientSession, type SessionContext } from './client/client-session.js'
import { ProxyUsers } from './client/proxy-users.js'
import { ReservedNames } from './client/reserved-names.js'
import { ClusterBackend } from './cluster/cluster-backend.js'
import { BackendAddressError } from './errors.js'
import { L1SwitchHold } from './l1-switch-hold.js'
import { ProxyStats } from './proxy-stats.js'
import { adoptReading } from './shared-read-buffer.js'

/** Options of createProxy. */
export interface ProxyOptions {
  /**
   * The backend Redis: `redis://[user:password@]host[:port][/db]`, or `rediss://` for TLS; or a Sentinel-managed
   * primary, `redis+sentinel://[user:password@]host1:port1,.../<master-name>[/<db>]` (rediss+sentinel:// for TLS),
   * which the proxy follows through failovers.
   */
  backend: string
  /** Sentinel's own password for a redis+sentinel:// backend or control URL that does not give `sentinelPassword`. */
  sentinelPassword?: string
  /** The backend is a Redis Cluster and `backend` one of its nodes: requests go to the master of their slot. */
  cluster?: boolean
  /** TLS options for a rediss:// backend (CA, client certificate...). */
  backendTls?: ConnectionOptions
  /** Port to listen on; default 6380, 0 for any free port. */
  port?: number
  /** Address to listen on; default 127.0.0.1. */
  host?: string
  /** The proxy's own users and their passwords (`default` for AUTH with a password only); none: no AUTH. */
  passwords?: ReadonlyMap<string, string>
  /** Shared backend connections that clients are spread over; default 4. */
  sharedConnections?: number
  /** Clients beyond this are refused with Redis' own error; default 10,000. */
  maxClients?: number
  /** A client whose unread replies pass this many bytes is disconnected; default 256 MiB. */
  clientOutputLimitBytes?: number
  /**
   * Heatsink's own Redis (`redis://`, `rediss://` or `redis+sentinel://`, whatever the backend is): the agent's
   * reports, registry and channels go there, and the backend keeps only the application's keys, the database
   * marker and tracking. A rediss:// URL takes `backendTls` too. Default: the backend.
   */
  control?: string
  /** `control` names one node of a Redis Cluster (HEATSINK_CONTROL_REDIS_CLUSTER=true). */
  controlCluster?: boolean
  /** The agent's options (namespace, agentId, registryKey, l1, windowMs, log...); the backend is its Redis. */
  heatsink?: Omit<AgentOptions, 'redis' | 'control'>
}

export const DEFAULT_PROXY_PORT = 6380
const MAX_CLIENTS_ERROR = Buffer.from('-ERR max number of clients reached\r\n')

/**
 * The Heatsink proxy: a RESP server that any Redis client connects to instead of Redis. It is an agent (its own
 * id, reports, registry view, L1, invalidation): every command runs through the same data-plane core as the
 * ioredis front door, so hot keys are detected across every proxy and agent and answered from this proxy's L1.
 */
export class RespProxy {
  readonly agent: Agent
  readonly stats = new ProxyStats()
  readonly #server: Server
  readonly #pool: BackendPool
  readonly #sessions = new Set<ClientSession>()
  readonly #context: SessionContext
  readonly #maxClients: number
  // The agent's client when the proxy made it (TLS options), closed with the proxy.
  readonly #agentClient: Redis | Cluster | undefined
  // The control Redis's client when the proxy made it (a rediss:// URL with TLS options), closed with the proxy.
  readonly #controlClient: Redis | Cluster | undefined
  readonly #cluster: ClusterBackend | undefined
  readonly #sentinel: SentinelBackend | undefined
  readonly #hold: L1SwitchHold
  #nextId = 1
  #closing: Promise<void> | undefined

  /**
   * `prepared.cluster`: the agent's Cluster client, connected (createProxy makes it when `options.cluster`);
   * `prepared.sentinel`: the started follower of a redis+sentinel:// backend's primary.
   */
  constructor(options: ProxyOptions, prepared: { cluster?: Cluster; sentinel?: SentinelBackend } = {}) {
    const sentinel = prepared.sentinel
    if (isSentinelUrl(options.backend) && sentinel === undefined) {
      throw new BackendAddressError(
        'a redis+sentinel:// backend needs createProxy(), which finds the primary first',
      )
    }
    const address: BackendAddress = sentinel?.address ?? parseBackendUrl(options.backend, options.backendTls)
    this.#maxClients = options.maxClients ?? 10_000
    const latency = this.stats.backendLatency
    const onLatency = (seconds: number) => latency.observe(seconds)
    this.#pool = new BackendPool(address, options.sharedConnections ?? 4, onLatency, () =>
      sentinel?.suspect(),
    )
    this.#sentinel = sentinel
    // With TLS options, a Cluster or Sentinel the proxy makes the agent's client itself: the agent's Cluster client
    // also keeps the slot table the proxy routes by; its Sentinel client follows the primary as the pool does.
    if (sentinel !== undefined) {
      this.#agentClient = sentinel.client()
    } else if (options.cluster === true) {
      const cluster = prepared.cluster ?? clusterClient(address)
      this.#agentClient = cluster
      this.#cluster = new ClusterBackend(cluster, address, options.sharedConnections ?? 4, onLatency)
    } else if (options.backendTls !== undefined) {
      this.#agentClient = keepSocketErrorsHandled(new Redis(options.backend, { tls: options.backendTls }))
    }
    if (options.control !== undefined && options.controlCluster === true) {
      this.#controlClient = clusterClient(parseBackendUrl(options.control, options.backendTls))
    } else if (options.control !== undefined && isSentinelUrl(options.control)) {
      this.#controlClient = SentinelBackend.clientFor(options.control, options)
    } else if (options.control?.startsWith('rediss:') && options.backendTls !== undefined) {
      this.#controlClient = keepSocketErrorsHandled(new Redis(options.control, { tls: options.backendTls }))
    }
    this.agent = createAgent({
      ...options.heatsink,
      redis: this.#agentClient ?? options.backend,
      control: this.#controlClient ?? options.control,
    }) as Agent
    const hold = new L1SwitchHold(this.agent)
    this.#hold = hold
    sentinel?.follow((primary, nodeOptions) => {
      hold.hold(nodeOptions)
      this.#pool.moveTo(primary)
    })
    if (sentinel !== undefined) {
      // Mid-failover a client's requests wait for the new primary, as ioredis's offline queue keeps them.
      this.#pool.holdWhile(() => !sentinel.reachable)
      sentinel.whenReachable(() => this.#pool.release())
    }
    this.#context = {
      agent: this.agent,
      pool: this.#pool,
      cluster: this.#cluster,
      users: new ProxyUsers(options.passwords ?? new Map()),
      reserved: new ReservedNames(options.heatsink?.namespace ?? DEFAULT_NAMESPACE),
      backendDb: address.db,
      l1Held: () => hold.held,
      outputLimitBytes: options.clientOutputLimitBytes ?? 256 * 1024 * 1024,
      stats: this.stats,
      sessions: this.#sessions,
      onClose: (session) => this.#sessions.delete(session),
    }
    // Paused, so that no byte is read before the connection reads into the shared buffer (adoptReading).
    this.#server = createServer({ noDelay: true, pauseOnConnect: true }, (socket) => this.#accept(socket))
  }

  /** Starts listening; resolves with the port (useful with port 0). */
  listen(port = DEFAULT_PROXY_PORT, host = '127.0.0.1'): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject)
      this.#server.listen(port, host, () => {
        this.#server.off('error', reject)
        const bound = this.#server.address()
        resolve(typeof bound === 'object' && bound !== null ? bound.port : port)
      })
    })
  }

  /** Client connections open now. */
  get clients(): number {
    return this.#sessions.size
  }

  /** Whether the agent is serving (its registry view and invalidation channels are up) and a primary answers. */
  get ready(): boolean {
    return this.agent.stats().invalidationChannelUp && this.primaryReachable
  }

  /** False while a Sentinel-managed backend has no primary that answers (mid-failover); true otherwise. */
  get primaryReachable(): boolean {
    return this.#sentinel?.reachable ?? true
  }

  /** Backend connections open now. */
  get backendConnections(): number {
    return this.#pool.openConnections + (this.#cluster?.openConnections ?? 0)
  }

  /**
   * Stops accepting, lets every client's replies in flight be written and closes the clients, then the backend
   * and the agent; clients still open after `deadlineMs` are cut off.
   */
  close(deadlineMs = 5000): Promise<void> {
    this.#closing ??= this.#close(deadlineMs)
    return this.#closing
  }

  async #close(deadlineMs: number): Promise<void> {
    const stopped = new Promise<void>((resolve) => this.#server.close(() => resolve()))
    for (const session of this.#sessions) session.drain()
    const deadline = Date.now() + deadlineMs
    while (this.#sessions.size > 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10))
    for (const session of this.#sessions) session.destroy()
    await stopped
    this.#pool.close()
    this.#cluster?.close()
    this.#sentinel?.close()
    this.#hold.close()
    await this.agent.close()
    this.#agentClient?.disconnect()
    this.#controlClient?.disconnect()
  }

  #accept(socket: Socket): void {
    if (this.#closing !== undefined || this.#sessions.size >= this.#maxClients) {
      this.stats.clientsRejected++
      socket.on('error', () => {})
      // Read (and dropped), so that the client's own close is seen and the socket does not linger half-open.
      socket.resume()
      socket.end(MAX_CLIENTS_ERROR)
      return
    }
    this.stats.clientsAccepted++
    this.#sessions.add(new ClientSession(adoptReading(socket), this.#context, this.#nextId++))
  }
}

/** Creates a proxy and starts listening; resolves once it accepts connections (the agent gets ready alongside). */
export async function createProxy(options: ProxyOptions): Promise<{ proxy: RespProxy; port: number }> {
  // A Sentinel backend's pool needs the primary's address before any client connects.
  const sentinel = isSentinelUrl(options.backend) ? await SentinelBackend.start(options) : undefined
  // The agent takes a Cluster's masters from its slot table when it is made: the table must be loaded first,
  // or the agent tracks (and fills L1 from) the seed node alone.
  const cluster =
    options.cluster === true
      ? await connectedCluster(parseBackendUrl(options.backend, options.backendTls))
      : undefined
  let proxy: RespProxy
  try {
    proxy = new RespProxy(options, { cluster, sentinel })
  } catch (error) {
    sentinel?.close()
    throw error
  }
  try {
    const port = await proxy.listen(options.port ?? DEFAULT_PROXY_PORT, options.host ?? '127.0.0.1')
    return { proxy, port }
  } catch (error) {
    await proxy.close(0)
    throw error
  }
}

function clusterClient(address: BackendAddress): Cluster {
  return keepSocketErrorsHandled(
    new Cluster([{ host: address.host, port: address.port }], {
      redisOptions: { username: address.username, password: address.password, tls: address.tls },
    }),
  )
}

// A Cluster client once its slot table is loaded; rejects after 10 s (a seed node that is down or not a cluster).
async function connectedCluster(address: BackendAddress): Promise<Cluster> {
  const cluster = clusterClient(address)
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no Redis Cluster answered at ${address.host}:${address.port} within 10 s`)),
        10_000,
      )
      cluster.once('ready', () => {
        clearTimeout(timer)
        resolve()
      })
    })
    return cluster
  } catch (error) {
    cluster.disconnect()
    throw error
  }
}
