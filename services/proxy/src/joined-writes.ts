import type { Socket } from 'node:net'

// Writes smaller than this are joined; a larger one is written as it is (copying it would cost more than the
// write it saves).
const JOIN_BYTES = 16 * 1024

/** Told after each write to the socket, when its writableLength may have grown. */
export interface WriteWatcher {
  written(): void
}

/**
 * Small writes to a socket joined into one buffer and written together when flushed: by the owner (at the end of
 * a batch), else once the current work is done (`defer`: onSharedTick for replies, setImmediate for requests
 * gathered over a whole event loop turn). A pipeline of 16 requests or replies is then one write(2) of one buffer,
 * not a writev of 16: on loopback the system call, not the copy, is what costs.
 */
export class JoinedWrites {
  readonly #socket: Socket
  readonly #defer: (flush: () => void) => void
  readonly #watcher: WriteWatcher | undefined
  #parts: Buffer[] = []
  #bytes = 0
  #scheduled = false
  #holding = false
  // Made on the first deferred flush and kept: later ones allocate nothing, and an idle connection holds no closure.
  #deferredFlush: (() => void) | undefined

  constructor(socket: Socket, defer: (flush: () => void) => void, watcher?: WriteWatcher) {
    this.#socket = socket
    this.#defer = defer
    this.#watcher = watcher
  }

  write(bytes: Buffer): void {
    if (bytes.length >= JOIN_BYTES) {
      // After what was joined before it.
      this.flush()
      this.#send(bytes)
      return
    }
    this.#parts.push(bytes)
    this.#bytes += bytes.length
    if (!this.#scheduled && !this.#holding) {
      this.#scheduled = true
      this.#deferredFlush ??= () => {
        this.#scheduled = false
        this.flush()
      }
      this.#defer(this.#deferredFlush)
    }
  }

  /** Runs `work`, whose writes wait for the flush at its end rather than a deferred one. */
  batch(work: () => void): void {
    this.#holding = true
    try {
      work()
    } finally {
      this.#holding = false
      this.flush()
    }
  }

  flush(): void {
    const parts = this.#parts
    if (parts.length === 0) return
    this.#parts = []
    const bytes = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, this.#bytes)
    this.#bytes = 0
    this.#send(bytes)
  }

  // The only place the socket's getters are read: once per write(2), not once per reply joined into it.
  #send(bytes: Buffer): void {
    if (this.#socket.destroyed) return
    this.#socket.write(bytes)
    this.#watcher?.written()
  }
}

// Flushes waiting for the shared tick, in the order they were scheduled.
const due: Array<() => void> = []

/**
 * A deferral for JoinedWrites that runs every flush scheduled before it in one process.nextTick: one chunk of
 * replies from Redis answers dozens of clients, and each would otherwise schedule a tick of its own.
 */
export function onSharedTick(flush: () => void): void {
  if (due.length === 0) process.nextTick(runDue)
  due.push(flush)
}

function runDue(): void {
  let i = 0
  try {
    // A flush may schedule another (it is appended and runs in this pass).
    for (; i < due.length; i++) (due[i] as () => void)()
    due.length = 0
  } finally {
    // A flush threw: the ones after it still run, on a tick of their own.
    if (due.length > 0) {
      due.splice(0, i + 1)
      if (due.length > 0) process.nextTick(runDue)
    }
  }
}
