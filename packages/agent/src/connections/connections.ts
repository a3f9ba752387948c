import { keepSocketErrorsHandled } from '@heatsink/protocol'
import type { Cluster, Redis, RedisOptions } from 'ioredis'
import type { AgentLogger } from '../options/agent-options.js'

/** What the agent uses each of its own connections for; part of the connection name Redis shows. */
export type ConnectionRole = 'sub' | 'track' | 'report' | 'control' | 'replica' | 'sentinel'

// Reconnect quickly, then back off to 2 s: the agent's own connections never give up while it runs.
const retryStrategy = (attempt: number): number => Math.min(attempt * 100, 2000)

const ROLE_OPTIONS: Record<ConnectionRole, Partial<RedisOptions>> = {
  // CLIENT ID must be read before every SUBSCRIBE, so the agent resubscribes itself.
  sub: { lazyConnect: true, autoResubscribe: false, enableOfflineQueue: true },
  // A fill that cannot go now falls back to the data connection; nothing queues behind a dead socket. A fill in
  // flight when the connection drops is failed at once (maxRetriesPerRequest 0): without it ioredis forgets the
  // unsent reply on reconnect and only rejects it after 20 reconnects, and every read waiting on it waits too.
  track: {
    lazyConnect: true,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
  },
  // A report that cannot go at once is dropped and counted, never queued.
  report: { lazyConnect: false, enableOfflineQueue: false, maxRetriesPerRequest: 0 },
  // The control Redis given as a URL: registry and tuning reads, invalidation and fill announcements.
  control: { lazyConnect: false },
  // replica_read's reads and lag polls on one replica: nothing queues, a read that cannot go goes to the primary.
  replica: {
    lazyConnect: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
  },
  // SENTINEL REPLICAS, asked once a second while some key is replica_read.
  sentinel: { lazyConnect: false, maxRetriesPerRequest: 0 },
}

// ioredis 6 speaks RESP3 unless told otherwise; the agent's own connections stay on RESP2, as with ioredis 5:
// tracking redirects invalidations to a subscriber that reads them as pub/sub messages, and L1 keeps RESP2
// replies that each caller's command turns into its result. ioredis 5 has no such option and ignores it.
const RESP2 = { protocol: 2 } as Partial<RedisOptions>

/** ioredis options for one of the agent's own connections. */
export function roleOptions(
  role: ConnectionRole,
  agentId: string,
  extra: Partial<RedisOptions> = {},
): Partial<RedisOptions> {
  return {
    ...ROLE_OPTIONS[role],
    enableAutoPipelining: false,
    retryStrategy,
    ...RESP2,
    connectionName: `heatsink:${role}:${agentId.replace(/[^A-Za-z0-9_.:-]/g, '_')}`,
    ...extra,
  }
}

/** The connections an agent created, so that close() ends exactly those. */
export class OwnedConnections {
  readonly #connections = new Set<Redis | Cluster>()
  readonly #log: AgentLogger
  /** The last error any of them reported, for ready()'s rejection. */
  lastError: Error | undefined

  constructor(log: AgentLogger) {
    this.#log = log
  }

  /** Registers a connection the agent created and logs its errors (an unlistened 'error' would be printed). */
  add<T extends Redis | Cluster>(connection: T, role: string): T {
    this.#connections.add(connection)
    keepSocketErrorsHandled(connection)
    connection.on('error', (error: Error) => {
      this.lastError = error
      this.#log.debug({ role, error: error.message }, 'connection error')
    })
    return connection
  }

  /** Quits one connection and forgets it. */
  async close(connection: Redis | Cluster): Promise<void> {
    this.#connections.delete(connection)
    await quit(connection)
  }

  /** Quits every connection, each given at most `timeoutMs` (and 500 ms) to answer before it is disconnected. */
  async closeAll(timeoutMs = 500): Promise<void> {
    const all = [...this.#connections]
    this.#connections.clear()
    await Promise.all(all.map((connection) => quit(connection, Math.min(500, timeoutMs))))
  }
}

/** QUIT, bounded; a connection that does not answer in time is simply disconnected. */
export async function quit(connection: Redis | Cluster, timeoutMs = 500): Promise<void> {
  if (connection.status === 'end') return
  if (connection.status !== 'ready') {
    connection.disconnect()
    return
  }
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([
      connection.quit(),
      new Promise((resolve) => {
        timer = setTimeout(resolve, timeoutMs)
      }),
    ])
  } catch {
    // Closing anyway.
  } finally {
    clearTimeout(timer)
    connection.disconnect()
  }
}
