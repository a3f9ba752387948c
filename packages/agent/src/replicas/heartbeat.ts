import type { SeenHeartbeat } from './replica-node.js'

/** Sends one SET of the heartbeat to the primary; resolves when it is answered. */
export type SendHeartbeat = (key: string, value: string, ttlMs: number) => Promise<unknown>

// Long enough to outlive any pause of the writer, short enough that an agent gone leaves nothing for long.
const HEARTBEAT_TTL_MS = 10_000

/**
 * This agent's heartbeat on one primary: a key it alone writes (its id and a per-run token in the name), holding
 * a sequence number and the agent's own time when it was sent. A replica that shows sequence N has applied
 * every write the primary answered before heartbeat N was sent: so its data is at most (now - sentAt of N) old,
 * measured on one clock (this process's; no two machines' clocks are compared), and a write this process saw
 * answered before N was sent is on it.
 */
export class Heartbeat {
  readonly key: string
  readonly #token: string
  readonly #send: SendHeartbeat
  readonly #now: () => number
  #next = 0
  #inFlight = false

  constructor(key: string, token: string, send: SendHeartbeat, now: () => number) {
    this.key = key
    this.#token = token
    this.#send = send
    this.#now = now
  }

  /** The sequence of the next heartbeat to be sent: the first that a write answered now precedes. */
  get nextSequence(): number {
    return this.#next
  }

  /** Sends the next heartbeat, unless one is still unanswered (a primary that stalls is not sent a pile). */
  beat(): void {
    if (this.#inFlight) return
    this.#inFlight = true
    const sequence = this.#next++
    const value = `${this.#token} ${sequence} ${this.#now()}`
    this.#send(this.key, value, HEARTBEAT_TTL_MS).then(
      () => {
        this.#inFlight = false
      },
      () => {
        this.#inFlight = false
      },
    )
  }

  /** What a replica's copy of the key shows; undefined when it holds nothing of this run. */
  readonly parse = (value: string | null): SeenHeartbeat | undefined => {
    if (value === null) return undefined
    const [token, sequence, sentAt] = value.split(' ')
    if (token !== this.#token) return undefined
    return { sequence: Number(sequence), sentAt: Number(sentAt) }
  }
}
