import { Command, Redis, type RedisOptions } from 'ioredis'
import type { OwnedConnections } from '../connections/connections.js'
import { roleOptions } from '../connections/connections.js'

/** The newest heartbeat of this agent a replica has shown, and when its primary was sent it. */
export interface SeenHeartbeat {
  readonly sequence: number
  readonly sentAt: number
}

const NOTHING_SEEN: SeenHeartbeat = { sequence: -1, sentAt: Number.NEGATIVE_INFINITY }

/**
 * One replica of a primary, on a connection of the agent's own: what it has shown of this agent's heartbeat (so
 * how far behind its primary it may be), and the reads sent to it. Its commands never queue: a read that cannot
 * go at once, fails or takes too long goes to the primary instead (the caller sees the primary's answer).
 */
export class ReplicaNode {
  readonly address: string
  readonly #connection: Redis
  readonly #connections: OwnedConnections
  #seen: SeenHeartbeat = NOTHING_SEEN
  #polling = false
  // Set when a read failed or ran past its deadline: the replica takes no reads until a poll answers again.
  #suspect = false

  constructor(
    address: string,
    options: Partial<RedisOptions>,
    agentId: string,
    connections: OwnedConnections,
  ) {
    this.address = address
    this.#connections = connections
    const [host, port] = splitAddress(address)
    this.#connection = connections.add(
      new Redis({
        ...options,
        ...roleOptions('replica', agentId, { host, port }),
      }),
      'replica',
    )
    // A lost connection forgets what the replica showed: it may come back as another server's replica.
    this.#connection.on('close', () => {
      this.#seen = NOTHING_SEEN
    })
  }

  /** The newest heartbeat seen on it while it answers; nothing while its connection is down or it is suspect. */
  get seen(): SeenHeartbeat {
    return this.#connection.status === 'ready' && !this.#suspect ? this.#seen : NOTHING_SEEN
  }

  /**
   * Reads this agent's heartbeat on the replica (`parse` turns the value into what it shows, undefined for a
   * value of another run). One poll at a time: a replica that stalls is not sent a pile of them.
   */
  poll(heartbeatKey: string, parse: (value: string | null) => SeenHeartbeat | undefined): void {
    if (this.#polling || this.#connection.status !== 'ready') return
    this.#polling = true
    this.#connection.get(heartbeatKey).then(
      (value) => {
        this.#polling = false
        this.#suspect = false
        const seen = parse(value)
        if (seen !== undefined && seen.sequence > this.#seen.sequence) this.#seen = seen
      },
      () => {
        this.#polling = false
      },
    )
  }

  /**
   * The command's reply as the Redis parser gives it (the form a fill has), or a rejection when the replica
   * fails or has not answered within `deadlineMs` (it is then suspect until a poll answers).
   */
  read(command: string, args: readonly unknown[], deadlineMs: number): Promise<unknown> {
    const read = new Command(command.toUpperCase(), [...args] as Array<string | Buffer>, {
      replyEncoding: null,
    })
    this.#connection.sendCommand(read)
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('replica read deadline')), deadlineMs)
    })
    return Promise.race([read.promise, deadline]).then(
      (reply) => {
        clearTimeout(timer)
        return reply
      },
      (error: unknown) => {
        clearTimeout(timer)
        // A reply about the key itself (WRONGTYPE) is what the primary answers too: the replica stays in.
        if (!(error instanceof Error && error.message.startsWith('WRONGTYPE'))) this.#suspect = true
        throw error
      },
    )
  }

  close(): Promise<void> {
    return this.#connections.close(this.#connection)
  }
}

function splitAddress(address: string): [string, number] {
  const colon = address.lastIndexOf(':')
  return [address.slice(0, colon), Number(address.slice(colon + 1))]
}
