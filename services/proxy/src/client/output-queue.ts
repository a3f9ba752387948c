import type { Socket } from 'node:net'
import Denque from 'denque'
import type { ReplySink } from '../backend/reply-sink.js'
import { JoinedWrites, onSharedTick, type WriteWatcher } from '../joined-writes.js'
import { errorReply } from '../resp/reply-codec.js'

/**
 * One reply's place in a client's output. Replies leave in request order whatever order they are ready in:
 * the slot at the head writes straight to the socket as its bytes arrive (so a large value streams through),
 * the others hold theirs until every reply before them has left. A slot is itself the sink of a request relayed
 * to Redis unchanged, so the pass-through path allocates one object per request.
 */
export class ReplySlot implements ReplySink {
  #chunks: Buffer[] | undefined
  #done = false
  #started = false
  readonly #queue: OutputQueue
  // The client asked not to get this reply (CLIENT REPLY OFF or SKIP): it keeps its turn, without bytes. A flag
  // rather than a subclass, so that every call on a slot stays monomorphic.
  readonly #silent: boolean

  constructor(queue: OutputQueue, silent: boolean) {
    this.#queue = queue
    this.#silent = silent
  }

  /** Whether any byte of this reply was handed on (so it can no longer be replaced by an error). */
  get started(): boolean {
    return this.#started
  }

  get done(): boolean {
    return this.#done
  }

  /** Part of this reply's bytes. */
  push(bytes: Buffer): void {
    if (this.#silent) return
    this.#started = true
    if (this.#queue.isHead(this)) this.#queue.write(bytes)
    else {
      this.#chunks ??= []
      this.#chunks.push(bytes)
      this.#queue.held(bytes.length)
    }
  }

  /** The reply is complete. */
  finish(): void {
    this.#done = true
    if (this.#queue.isHead(this)) this.#queue.advance()
  }

  data(bytes: Buffer): void {
    this.push(bytes)
  }

  end(): void {
    this.finish()
  }

  backlogged(resume: () => void): boolean {
    return this.#queue.isHead(this) && this.#queue.backlogged(resume)
  }

  /** The backend was lost: an error reply, or, when part of the reply already left, the client is cut off. */
  fail(error: Error): void {
    if (this.#started) this.#queue.broken(error)
    else this.complete(errorReply(error.message))
  }

  /** The whole reply at once. */
  complete(bytes: Buffer): void {
    this.push(bytes)
    this.finish()
  }

  /** The bytes held while waiting for the head, handed over once (see OutputQueue.advance). */
  takeHeld(): Buffer[] | undefined {
    const chunks = this.#chunks
    this.#chunks = undefined
    return chunks
  }
}

/**
 * Whom an OutputQueue tells about its client: an object rather than callbacks, so that each of thousands of idle
 * connections holds no closures for them.
 */
export interface OutputOwner {
  /** The bytes waiting for the client passed the limit. */
  overflowed(): void
  /** The last pending reply has been written (called each time). */
  drained(): void
}

// A reply streaming to a client this far behind stops the backend connection's reads until the client catches up,
// so a 512 MB value read slowly waits in Redis, not in the proxy.
const BACKLOG_BYTES = 8 * 1024 * 1024

/**
 * A client connection's replies in request order (see ReplySlot). Small replies are joined into one buffer until
 * the end of the batch (the replies to one parsed chunk) or of the event loop turn (replies from the backend), so
 * a pipeline of 16 replies leaves in one write(2) of one buffer, not 16 writes or a writev of 16. The owner is told
 * when the bytes waiting for the client (in the socket and held in slots) pass `limitBytes`: one slow reader must
 * not hold unbounded memory.
 */
export class OutputQueue implements WriteWatcher {
  readonly #socket: Socket
  readonly #slots = new Denque<ReplySlot>()
  readonly #limitBytes: number
  readonly #owner: OutputOwner
  #heldBytes = 0
  readonly #joined: JoinedWrites
  /** While set, replies reserved are dropped (CLIENT REPLY OFF or SKIP). */
  silent = false

  constructor(socket: Socket, limitBytes: number, owner: OutputOwner) {
    this.#socket = socket
    this.#limitBytes = limitBytes
    this.#owner = owner
    this.#joined = new JoinedWrites(socket, onSharedTick, this)
  }

  /**
   * Whether the client is more than BACKLOG_BYTES behind the reply streaming to it; if so `resume` runs once it
   * has caught up (the socket drained).
   */
  backlogged(resume: () => void): boolean {
    if (this.#socket.writableLength <= BACKLOG_BYTES || this.#socket.destroyed) return false
    const socket = this.#socket
    const done = () => {
      socket.off('drain', done)
      socket.off('close', done)
      resume()
    }
    socket.on('drain', done)
    socket.on('close', done)
    return true
  }

  /**
   * Closes the connection once what was written so far has left (joined replies first), reading nothing more, as
   * Redis does after QUIT or a protocol error: a client still sending then finds its writes refused.
   */
  end(): void {
    const socket = this.#socket
    this.#joined.flush()
    socket.pause()
    socket.end(() => socket.destroy())
  }

  /** A reply was cut off half-way: the client's stream cannot be continued. */
  broken(error: Error): void {
    this.#socket.destroy(error)
  }

  /** A place for the next reply, behind every one reserved before. */
  reserve(): ReplySlot {
    const slot = new ReplySlot(this, this.silent)
    this.#slots.push(slot)
    return slot
  }

  /** A complete reply for the next request: written at once when nothing is ahead of it. */
  reply(bytes: Buffer): void {
    if (this.silent) return
    if (this.#slots.length === 0) this.write(bytes)
    else this.reserve().complete(bytes)
  }

  /** Replies reserved and not yet fully written. */
  get pending(): number {
    return this.#slots.length
  }

  isHead(slot: ReplySlot): boolean {
    return this.#slots.peekFront() === slot
  }

  // Bytes for the client. A closed socket's are dropped, and the limit checked, where they reach the socket
  // (written): the socket's getters cost more than the join itself on an L1 hit's path.
  write(bytes: Buffer): void {
    this.#joined.write(bytes)
  }

  /** The joined bytes reached the socket (WriteWatcher): the client may now be past the limit. */
  written(): void {
    this.#checkLimit()
  }

  held(bytes: number): void {
    this.#heldBytes += bytes
    this.#checkLimit()
  }

  /** The head slot is done: it leaves, and the slots behind it write what they hold, up to one not done. */
  advance(): void {
    const slots = this.#slots
    slots.shift()
    for (let slot = slots.peekFront(); slot !== undefined; slot = slots.peekFront()) {
      const chunks = slot.takeHeld()
      if (chunks !== undefined) {
        for (const chunk of chunks) {
          this.#heldBytes -= chunk.length
          this.write(chunk)
        }
      }
      if (!slot.done) return
      slots.shift()
    }
    this.#owner.drained()
  }

  /**
   * Runs `work` (the requests of one chunk a client sent) and writes what it answered in one write before the event
   * loop moves on: a request answered from L1 leaves at once.
   */
  batch(work: () => void): void {
    this.#joined.batch(work)
  }

  #checkLimit(): void {
    if (this.#socket.writableLength + this.#heldBytes > this.#limitBytes) this.#owner.overflowed()
  }
}
