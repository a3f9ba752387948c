import type { Socket } from 'node:net'
import { type Agent, ConnectionState, type Route } from '@heatsink/agent'
import { type CommandSpec, isBlocking, lookupCommand } from '@heatsink/commands'
import type { BackendConnection } from '../backend/backend-connection.js'
import type { BackendPool } from '../backend/backend-pool.js'
import type { ReplySink } from '../backend/reply-sink.js'
import type { ClusterBackend } from '../cluster/cluster-backend.js'
import { slotsOf } from '../cluster/cross-slot.js'
import { ProtocolError } from '../errors.js'
import type { ProxyStats } from '../proxy-stats.js'
import { errorReply } from '../resp/reply-codec.js'
import { encodeRequest, type Request, RequestParser } from '../resp/request-parser.js'
import { resp3Bytes, resp3Shape } from '../resp/resp3-reply.js'
import { type ChunkReceiver, receiveReads } from '../shared-read-buffer.js'
import { connectionCommandTiming, runConnectionCommand, type SessionControl } from './connection-commands.js'
import { type OutputOwner, OutputQueue, type ReplySlot } from './output-queue.js'
import type { ProxyUsers } from './proxy-users.js'
import { NOAUTH, OK } from './redis-replies.js'
import { asStatus, replyEncoder, SettledSink, settleDeferred } from './routed-sinks.js'
import { cachedReplyBytes, encodeOnce } from './served-reply.js'
import { sendShared } from './shared-route.js'

/** What every client session shares: the agent, the backend, the proxy's users and limits. */
export interface SessionContext {
  readonly agent: Agent
  readonly pool: BackendPool
  /** Set when the backend is a Redis Cluster: requests go to the master of their keys' slot. */
  readonly cluster: ClusterBackend | undefined
  readonly users: ProxyUsers
  /** The database the backend URL selects: the one the agent's registry and L1 describe. */
  readonly backendDb: number
  readonly outputLimitBytes: number
  readonly stats: ProxyStats
  readonly onClose: (session: ClientSession) => void
}

// Commands a client may send before it has authenticated.
const OPEN_COMMANDS: ReadonlySet<string> = new Set(['auth', 'hello', 'quit', 'reset'])
// After these the connection takes only subscriber commands and receives messages nobody asked for.
const SUBSCRIBE_COMMANDS: ReadonlySet<string> = new Set(['subscribe', 'psubscribe', 'ssubscribe'])

/**
 * One client connection: requests parsed as they arrive, each run through the agent's data-plane core (the same
 * CommandRouter as the ioredis front door) and carried out (answered from L1, shared, split, or sent to Redis),
 * replies written in request order. Requests go on a shared backend connection until the client needs state
 * Redis keeps per connection (MULTI, WATCH, SELECT, blocking commands, subscriptions): then, once every
 * earlier reply has arrived, on a connection of its own for the rest of its life. A RESP3 client's connections
 * (shared or its own) speak RESP3.
 */
export class ClientSession implements SessionControl, OutputOwner, ChunkReceiver {
  readonly id: number
  readonly #socket: Socket
  readonly #context: SessionContext
  readonly #parser = new RequestParser()
  readonly #output: OutputQueue
  readonly #state = new ConnectionState()
  readonly #sharedIndex: number
  #authenticated: boolean
  #name: Buffer | null = null
  #db: number
  #resp3 = false
  #pinned: BackendConnection | undefined
  #tunnel = false
  #tunnelSlot: ReplySlot | undefined
  // On a Cluster, a MULTI answered here and not yet sent: it goes to the master of the first key that follows.
  #deferredMulti: Buffer | undefined
  // On a Cluster, the client's own connection is for one transaction only: the next may be on another master.
  #transactionPin = false
  // Requests received while an earlier one waits for every reply before it (it moves the client to another
  // connection, or resets it); they run in order once it has.
  #held: Held[] | undefined
  #closing = false

  constructor(socket: Socket, context: SessionContext, id: number) {
    this.id = id
    this.#socket = socket
    this.#context = context
    this.#sharedIndex = id % context.pool.sharedCount
    this.#authenticated = !context.users.required
    this.#db = context.backendDb
    this.#output = new OutputQueue(socket, context.outputLimitBytes, this)
    socket.setNoDelay(true)
    ;(socket as SessionSocket)[SESSION] = this
    receiveReads(socket, this)
    socket.on('error', ignoreError)
    socket.on('close', onClose)
  }

  /** One chunk from the client (ChunkReceiver). */
  receive(chunk: Buffer): void {
    if (this.#closing) return
    try {
      this.#output.batch(() => this.#parser.feed(chunk, this.#onRequest))
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error
      this.#context.stats.protocolErrors++
      this.quit(errorReply(`ERR Protocol error: ${error.message}`))
    }
  }

  get name(): Buffer | null {
    return this.#name
  }

  set name(name: Buffer | null) {
    this.#name = name
  }

  get users(): ProxyUsers {
    return this.#context.users
  }

  get authenticated(): boolean {
    return this.#authenticated
  }

  /** Lets the client in (AUTH or HELLO AUTH succeeded). */
  authenticate(): void {
    this.#authenticated = true
  }

  get resp3(): boolean {
    return this.#resp3
  }

  /** A complete reply, in order behind every earlier one. */
  reply(bytes: Buffer): void {
    this.#output.reply(bytes)
  }

  /** Replies OK, then closes the connection once every reply has been written. */
  quit(reply: Buffer): void {
    this.#closing = true
    this.#output.reply(reply)
    if (this.#output.pending === 0) this.#output.end()
  }

  /** Ends the connection once the replies so far are written (SIGTERM drain). */
  drain(): void {
    this.#closing = true
    this.#socket.pause()
    if (this.#output.pending === 0) this.#output.end()
  }

  /** Drops the connection at once. */
  destroy(): void {
    this.#socket.destroy()
  }

  /** Back to a fresh connection's state (RESET): off the dedicated connection, database and protocol reset. */
  reset(): void {
    this.#context.agent.router.connectionClosed(this.#state)
    this.#unpin()
    this.#db = this.#context.backendDb
    this.#resp3 = false
    this.#name = null
    this.#authenticated = !this.#context.users.required
  }

  /**
   * Switches the protocol (HELLO 3, or back with HELLO 2): Redis itself answers HELLO, on the client's own
   * connection when it has one (which then speaks the client's protocol), else on a shared connection of the new
   * protocol, where the client's later requests go. Replies the core makes (L1, shared reads, split keys) are
   * encoded in the client's protocol.
   */
  switchProtocol(version: 2 | 3): void {
    this.#resp3 = version === 3
    const hello = encodeRequest(['HELLO', String(version)])
    this.#send(lookupCommand('hello'), 'hello', [], hello, this.#output.reserve())
  }

  readonly #onRequest = (request: Request): void => {
    if (this.#closing) return
    if (this.#held !== undefined) this.#held.push({ run: () => this.#dispatch(request), afterDrain: false })
    else this.#dispatch(request)
  }

  #dispatch(request: Request): void {
    const name = request.name
    const stats = this.#context.stats
    stats.countCommand(name)
    if (!this.#authenticated && !OPEN_COMMANDS.has(name)) {
      this.reply(NOAUTH)
      return
    }
    if (this.#tunnel) {
      if (name === 'quit' || name === 'reset') {
        // The subscription's stream ends here, so the answer can follow it.
        this.#tunnelSlot?.finish()
        this.#tunnelSlot = undefined
        runConnectionCommand(this, name, request)
      } else this.#pinned?.writeRaw(request.raw)
      return
    }
    const timing = connectionCommandTiming(name, request)
    if (timing === 'now') {
      runConnectionCommand(this, name, request)
      return
    }
    if (timing === 'after-replies') {
      this.#whenDrained(() => runConnectionCommand(this, name, request))
      return
    }
    const args = request.args
    const spec = lookupCommand(name)
    if (this.#deferredMulti !== undefined && this.#pinned === undefined && !spec?.transaction) {
      // The transaction's first command names its master: MULTI is sent there first, then the command.
      const multi = this.#deferredMulti
      this.#ensurePinned(slotsOf(spec, args)[0] ?? 0)
      this.#transactionPin = true
      this.#whenDrained(() => {
        this.#deferredMulti = undefined
        this.#pinned?.send(multi, DISCARD_REPLY)
        this.#dispatch(request)
      })
      return
    }
    if (spec?.pubsub === true && SUBSCRIBE_COMMANDS.has(name)) {
      // On the client's own connection already, the subscription follows its earlier requests there at once; a
      // new connection waits for the replies on the shared one, so that it cannot overtake them at Redis.
      // On a Cluster, to the master of the channel's slot for SSUBSCRIBE (shard channels live there).
      if (this.#pinned !== undefined) this.#startTunnel(request)
      else {
        this.#ensurePinned(slotsOf(spec, args)[0] ?? 0)
        this.#whenDrained(() => this.#startTunnel(request))
      }
      return
    }
    if (this.#context.cluster !== undefined && this.#pinned === undefined && spec?.transaction === true) {
      if (this.#clusterTransaction(name, args, request)) return
    }
    if (this.#pinned === undefined && spec !== undefined) {
      if (spec.transaction || isBlocking(spec, args) || name === 'select') {
        // Pinned first, so that the request runs on the new connection once the replies before it are in. On a
        // Cluster, to the master of the command's first key (a transaction must keep to one slot's master).
        this.#ensurePinned(slotsOf(spec, args)[0] ?? 0)
        this.#transactionPin = this.#context.cluster !== undefined && spec.transaction
        this.#whenDrained(() => this.#dispatch(request))
        return
      }
    }
    if (name === 'select') this.#db = Number(args[0]?.toString())
    const route =
      this.#db !== this.#context.backendDb
        ? undefined
        : this.#context.agent.router.route(name, args, this.#state, false)
    this.#carry(route, spec, name, args, request, undefined)
  }

  // Carries out the core's route for a request, into `slot` when its place among the replies was reserved
  // before (a request that waited for an earlier one: an 'after' route).
  #carry(
    route: Route | undefined,
    spec: CommandSpec | undefined,
    name: string,
    args: Buffer[],
    request: Request,
    reserved: ReplySlot | undefined,
  ): void {
    const stats = this.#context.stats
    if (route === undefined) {
      this.#send(spec, name, args, request.raw, reserved ?? this.#output.reserve())
      if (this.#transactionPin && (name === 'exec' || name === 'discard'))
        this.#whenDrained(() => this.#endTransaction())
      return
    }
    switch (route.kind) {
      case 'served': {
        if (route.key !== undefined) stats.countServed(route.key)
        else stats.served++
        const reply = asStatus(name, route.reply, false)
        // A one-key hit is L1's own reply object, whose bytes are worth keeping; MGET's array is new every time.
        const bytes = this.#resp3
          ? resp3Bytes(reply, resp3Shape(name, args))
          : route.key !== undefined
            ? cachedReplyBytes(reply)
            : encodeOnce(reply)
        if (reserved === undefined) this.#output.reply(bytes)
        else reserved.complete(bytes)
        return
      }
      case 'deferred': {
        const slot = reserved ?? this.#output.reserve()
        const encode = replyEncoder(this.#resp3, name, args, spec?.access === 'write')
        settleDeferred(route.reply, slot, encode, () => this.#send(spec, name, args, request.raw, slot))
        return
      }
      case 'after': {
        const slot = reserved ?? this.#output.reserve()
        route.ready.then(() => this.#carry(route.next(), spec, name, args, request, slot))
        return
      }
      case 'send': {
        const sent = (route.args as Buffer[] | undefined) ?? args
        const bytes = route.args === undefined ? request.raw : encodeRequest([request.name, ...sent])
        const encode = replyEncoder(this.#resp3, name, args, spec?.access === 'write')
        const slot = reserved ?? this.#output.reserve()
        this.#send(spec, name, sent, bytes, new SettledSink(slot, route.settle, encode))
        if (this.#transactionPin && (name === 'exec' || name === 'discard'))
          this.#whenDrained(() => this.#endTransaction())
        return
      }
    }
  }

  // Runs `run` once every earlier reply has been written; requests after it wait their turn.
  #whenDrained(run: () => void): void {
    if (this.#output.pending === 0 && this.#held === undefined) {
      run()
      return
    }
    if (this.#held === undefined) {
      this.#held = []
      this.#socket.pause()
    }
    this.#held.push({ run, afterDrain: true })
  }

  /** Every pending reply has been written (OutputOwner). */
  drained(): void {
    if (this.#closing) {
      this.#output.end()
      return
    }
    // Not inside the reply that drained the queue: the requests run on a stack of their own.
    if (this.#held !== undefined) queueMicrotask(() => this.#runHeld())
  }

  #runHeld(): void {
    const held = this.#held
    if (held === undefined || this.#output.pending > 0) return
    this.#held = undefined
    for (let i = 0; i < held.length; i++) {
      const item = held[i] as Held
      if (this.#held !== undefined || (item.afterDrain && this.#output.pending > 0)) {
        // Waiting again: the rest keep their order behind.
        this.#held ??= []
        this.#held.push(...held.slice(i))
        return
      }
      item.run()
    }
    if (this.#held === undefined && !this.#closing) this.#socket.resume()
  }

  // From here the connection relays whatever Redis sends (replies and pushed messages) through one slot that stays
  // open behind every earlier reply.
  #startTunnel(request: Request): void {
    const pinned = this.#ensurePinned(0)
    this.#tunnel = true
    const slot = this.#output.reserve()
    this.#tunnelSlot = slot
    pinned.tunnel((chunk) => slot.push(chunk))
    pinned.writeRaw(request.raw)
  }

  /**
   * MULTI, EXEC and DISCARD on a Cluster before the transaction has a master: MULTI is answered here and held
   * until a keyed command names the master (Redis runs a transaction on one node); an EXEC or DISCARD before any
   * command is answered as Redis would (an empty transaction). True when the request was handled here.
   */
  #clusterTransaction(name: string, args: Buffer[], request: Request): boolean {
    const router = this.#context.agent.router
    if (name === 'multi' && this.#deferredMulti === undefined) {
      router.route(name, args, this.#state, false)
      this.#deferredMulti = request.raw
      this.reply(OK)
      return true
    }
    if ((name === 'exec' || name === 'discard') && this.#deferredMulti !== undefined) {
      this.#deferredMulti = undefined
      router.route(name, args, this.#state, false)
      this.reply(name === 'exec' ? EMPTY_ARRAY : OK)
      return true
    }
    return false
  }

  // A Cluster transaction answered: back to the shared connections (the next one may be on another master).
  #endTransaction(): void {
    if (!this.#transactionPin) return
    this.#transactionPin = false
    this.#unpin()
  }

  #ensurePinned(slot: number): BackendConnection {
    // The connection's state (a transaction, subscriptions, the database) is gone: so is the client's.
    const onLost = () => {
      if (this.#pinned !== undefined) this.#socket.destroy()
    }
    const cluster = this.#context.cluster
    this.#pinned ??=
      cluster === undefined
        ? this.#context.pool.dedicated(onLost, this.#resp3)
        : cluster.dedicated(slot, onLost, this.#resp3)
    return this.#pinned
  }

  // On the client's own connection when it has one, else on the shared connections (shared-route.ts).
  #send(spec: CommandSpec | undefined, name: string, args: Buffer[], bytes: Buffer, sink: ReplySink): void {
    if (this.#pinned !== undefined) this.#pinned.send(bytes, sink)
    else sendShared(this.#context, this.#sharedIndex, this.#resp3, spec, name, args, bytes, sink)
  }

  #unpin(): void {
    const pinned = this.#pinned
    this.#pinned = undefined
    this.#tunnel = false
    this.#tunnelSlot?.finish()
    this.#tunnelSlot = undefined
    this.#transactionPin = false
    pinned?.close()
  }

  /** The client fell too far behind its replies (OutputOwner): it is cut off. */
  overflowed(): void {
    this.#context.stats.outputOverflows++
    this.#socket.destroy()
  }

  /** The client's socket closed (its 'close'). */
  closed(): void {
    this.#closing = true
    this.#context.agent.router.connectionClosed(this.#state)
    this.#unpin()
    this.#context.onClose(this)
  }
}

const EMPTY_ARRAY = Buffer.from('*0\r\n')
// The reply to a MULTI sent ahead of a transaction's first command: the client was answered already.
const DISCARD_REPLY: ReplySink = { data() {}, end() {}, fail() {} }

/** A request waiting its turn; `afterDrain` when it may run only once every earlier reply was written. */
interface Held {
  run: () => void
  afterDrain: boolean
}

// The socket's listeners are shared by every session, which each socket points to: thousands of idle connections
// then hold no closures of their own for them.
const SESSION: unique symbol = Symbol('heatsink session')
type SessionSocket = Socket & { [SESSION]: ClientSession }

function onClose(this: Socket): void {
  ;(this as SessionSocket)[SESSION].closed()
}

// Errors end in 'close', which is where the session cleans up.
function ignoreError(): void {}
