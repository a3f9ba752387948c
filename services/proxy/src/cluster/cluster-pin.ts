import { type CommandSpec, isBlocking } from '@heatsink/commands'
import { OK } from '../client/redis-replies.js'

const EMPTY_ARRAY = Buffer.from('*0\r\n')

/**
 * A client's transactions and blocking commands on a Redis Cluster, where its own backend connection goes to one
 * master. Redis runs a transaction on one node, and a blocking command waits on the node of its key: so on a
 * Cluster the client's own connection serves one transaction (MULTI to EXEC or DISCARD) or one blocking command,
 * and then the client returns to the shared connections, since its next command may be for another master.
 *
 * MULTI names no key, so it cannot choose the master: it is answered at once and held until the transaction's
 * first keyed command names the master, then sent there ahead of that command. EXEC or DISCARD before any command
 * is an empty transaction, answered as Redis answers it. WATCH names its keys, so it pins like any keyed command
 * of a transaction (the command table marks MULTI, EXEC, DISCARD, WATCH and UNWATCH as transaction commands).
 *
 * The session (client/client-session.ts) owns the connection and the order of replies; this holds what the
 * connection is for and answers the questions the session asks of it on a Cluster. A standalone backend has
 * none: there the client's own connection is kept for the rest of its life.
 */
export class ClusterPin {
  #heldMulti: Buffer | undefined
  #transaction = false
  #blocking = false

  /** A MULTI answered here and not yet sent: it goes to the master of the first key that follows. */
  get heldMulti(): Buffer | undefined {
    return this.#heldMulti
  }

  /** Whether the client's own connection is taken for one transaction or one blocking command. */
  get active(): boolean {
    return this.#transaction || this.#blocking
  }

  /**
   * MULTI, EXEC or DISCARD before the transaction has a master (the client has no connection of its own): the
   * reply to write at once, or undefined when the command goes to Redis like any other. MULTI is held (a second
   * one goes to Redis, which refuses it as nested); EXEC and DISCARD end a held, empty transaction.
   */
  beforeMaster(name: string, raw: Buffer): Buffer | undefined {
    if (name === 'multi' && this.#heldMulti === undefined) {
      this.#heldMulti = raw
      return OK
    }
    if ((name === 'exec' || name === 'discard') && this.#heldMulti !== undefined) {
      this.#heldMulti = undefined
      return name === 'exec' ? EMPTY_ARRAY : OK
    }
    return undefined
  }

  /** The held MULTI was sent, ahead of the transaction's first command. */
  multiSent(): void {
    this.#heldMulti = undefined
  }

  /** The client's own connection was taken for the held transaction. */
  pinnedForTransaction(): void {
    this.#transaction = true
  }

  /** The client's own connection was taken for this command: a transaction command, a blocking one, or neither. */
  pinnedFor(spec: CommandSpec, args: Buffer[]): void {
    this.#transaction = spec.transaction
    this.#blocking = !spec.transaction && isBlocking(spec, args)
  }

  /** Whether sending this command ends what the connection was taken for (once its reply is in). */
  endsAfter(spec: CommandSpec | undefined, name: string, args: Buffer[]): boolean {
    return (
      (this.#transaction && (name === 'exec' || name === 'discard')) ||
      (this.#blocking && spec !== undefined && isBlocking(spec, args))
    )
  }

  /** The client's own connection is gone: the client is back on the shared connections. */
  unpinned(): void {
    this.#transaction = false
    this.#blocking = false
  }
}
