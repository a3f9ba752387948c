import type { BackendConnection } from '../backend/backend-connection.js'
import type { ReplySink } from '../backend/reply-sink.js'
import { encodeRequest } from '../resp/request-parser.js'

const CLIENT_ID = encodeRequest(['CLIENT', 'ID'])

/**
 * A client's blocking requests (BLPOP, XREAD BLOCK...) on its own backend connection: CLIENT ID goes ahead of the
 * first, so that CLIENT UNBLOCK can reach the client by its Redis id; and the client counts as blocked (CLIENT
 * LIST) until each reply, or the connection's loss, comes. Made on a client's first blocking request: most
 * clients never send one.
 */
export class BlockingRequests {
  // The Redis id of the client's own backend connection; 0 while CLIENT ID is unanswered.
  #backendId: number | undefined
  // Settles with the id once Redis answers the CLIENT ID sent for it (0 if the connection is lost first).
  #backendIdAnswer: Promise<number> | undefined
  #waiting = 0

  /** Whether a blocking request waits for its reply. */
  get blocked(): boolean {
    return this.#waiting > 0
  }

  /** The Redis id of the client's own connection, once known; undefined before any blocking request on it. */
  backendId(): Promise<number | undefined> {
    return this.#backendId === 0 && this.#backendIdAnswer !== undefined
      ? this.#backendIdAnswer
      : Promise.resolve(this.#backendId)
  }

  /** Sends a blocking request on `pinned`; `current` tells whether it is still the client's own connection. */
  send(
    pinned: BackendConnection,
    bytes: Buffer,
    sink: ReplySink,
    current: () => BackendConnection | undefined,
  ): void {
    if (this.#backendId === undefined) {
      this.#backendId = 0
      let answered: (id: number) => void = () => {}
      this.#backendIdAnswer = new Promise((resolve) => {
        answered = resolve
      })
      pinned.send(
        CLIENT_ID,
        integerSink((id) => {
          if (current() === pinned) this.#backendId = id
          answered(current() === pinned ? id : 0)
        }, answered),
      )
    }
    pinned.send(bytes, this.#whileBlocked(sink))
  }

  /** The client's own connection is gone, and its Redis id with it. */
  connectionGone(): void {
    this.#backendId = undefined
    this.#backendIdAnswer = undefined
  }

  #whileBlocked(sink: ReplySink): ReplySink {
    this.#waiting++
    const done = () => {
      this.#waiting--
    }
    return {
      data: (bytes) => sink.data(bytes),
      end: () => {
        done()
        sink.end()
      },
      fail: (error) => {
        done()
        sink.fail(error)
      },
      backlogged: (resume) => sink.backlogged?.(resume) === true,
    }
  }
}

// An integer reply's value to `done`; anything else (an error reply, the connection lost) 0 to `failed`.
function integerSink(done: (value: number) => void, failed: (value: 0) => void): ReplySink {
  let text = ''
  return {
    data: (bytes) => {
      text += bytes.toString('latin1')
    },
    end: () => {
      if (text.startsWith(':')) done(Number(text.slice(1)))
      else failed(0)
    },
    fail: () => failed(0),
  }
}
