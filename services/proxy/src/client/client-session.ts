// Longer than 300 lines: one client connection's state machine (which backend connection it is on, MULTI,
// tunnels, held requests, reply order) is read and changed by every request on the hot path; split into classes
// each request would cross several objects and the state's invariants would span files. Its separable concepts live
// beside it: connection commands (connection-commands.ts), the shared route (shared-route.ts), reply sinks
// (routed-sinks.ts), blocking requests (blocking-requests.ts), and on a Cluster what its own connection is for
// (../cluster/cluster-pin.ts).
import type { Socket } from 'node:net'
import { type Agent, ConnectionState, type Route, type ServedRoute } from '@heatsink/agent'
import { type CommandSpec, isBlocking, lookupCommand, runsScript } from '@heatsink/commands'
import type { BackendConnection } from '../backend/backend-connection.js'
import type { BackendPool } from '../backend/backend-pool.js'
import type { ReplySink } from '../backend/reply-sink.js'
import type { ClusterBackend } from '../cluster/cluster-backend.js'
import { ClusterPin } from '../cluster/cluster-pin.js'
import { slotsOf } from '../cluster/cross-slot.js'
import { ProtocolError } from '../errors.js'
import type { ProxyStats } from '../proxy-stats.js'
import { errorReply } from '../resp/reply-codec.js'
import { encodeRequest, type Request, RequestParser } from '../resp/request-parser.js'
import { resp3Bytes, resp3Shape } from '../resp/resp3-reply.js'
import { type ChunkReceiver, receiveReads } from '../shared-read-buffer.js'
import { BlockingRequests } from './blocking-requests.js'
import { type ReplyMode, replyMode } from './client-command.js'
import type { ClientInfo, ProxyClient } from './client-list.js'
import { connectionCommandTiming, runConnectionCommand, type SessionControl } from './connection-commands.js'
import { type OutputOwner, OutputQueue, type ReplySlot } from './output-queue.js'
import type { ProxyUsers } from './proxy-users.js'
import { NOAUTH } from './redis-replies.js'
import type { ReservedNames } from './reserved-names.js'
import {
  type Listing,
  listingOf,
  withoutReserved,
  withoutReservedInExec,
  withoutReservedMessages,
} from './reserved-replies.js'
import { asStatus, replyEncoder, SettledSink, settleDeferred } from './routed-sinks.js'
import { cachedReplyBytes, encodeOnce } from './served-reply.js'
import { sendShared } from './shared-route.js'
import { notSubscribedReply, UNSUBSCRIBE_COMMANDS } from './unsubscribe-replies.js'

/** What every client session shares: the agent, the backend, the proxy's users and limits. */
export interface SessionContext {
  readonly agent: Agent
  readonly pool: BackendPool
  /** Set when the backend is a Redis Cluster: requests go to the master of their keys' slot. */
  readonly cluster: ClusterBackend | undefined
  readonly users: ProxyUsers
  /** Heatsink's own keys and channels, which clients may not name. */
  readonly reserved: ReservedNames
  /** The database the backend URL selects: the one the agent's registry and L1 describe. */
  readonly backendDb: number
  /** True while the backend moves to a new primary: requests bypass L1 (and detection) until the agent follows. */
  readonly l1Held: () => boolean
  readonly outputLimitBytes: number
  readonly stats: ProxyStats
  /** Every client connection of this proxy process (CLIENT LIST, KILL, UNBLOCK). */
  readonly sessions: ReadonlySet<ClientSession>
  readonly onClose: (session: ClientSession) => void
}

// Commands a client may send before it has authenticated.
const OPEN_COMMANDS: ReadonlySet<string> = new Set(['auth', 'hello', 'quit', 'reset'])
// After these the connection receives what nobody asked for (messages, a replication stream): from then on the
// client's own connection to Redis is relayed both ways as it is.
const TUNNEL_COMMANDS: ReadonlySet<string> = new Set([
  'subscribe',
  'psubscribe',
  'ssubscribe',
  'sync',
  'psync',
])

/**
 * One client connection: requests parsed as they arrive, each run through the agent's data-plane core (the same
 * CommandRouter as the ioredis front door) and carried out (answered from L1, shared, split, or sent to Redis),
 * replies written in request order. Requests go on a shared backend connection until the client needs state
 * Redis keeps per connection (MULTI, WATCH, SELECT, blocking commands, subscriptions): then, once every
 * earlier reply has arrived, on a connection of its own for the rest of its life. A RESP3 client's connections
 * (shared or its own) speak RESP3.
 */
export class ClientSession implements SessionControl, ProxyClient, OutputOwner, ChunkReceiver {
  readonly id: number
  readonly #createdAt = coarseSeconds
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
  // Between MULTI and EXEC or DISCARD: Redis queues every command, so none may be answered here.
  #inMulti = false
  // In MULTI: per queued command, where its reply lists names (KEYS, SCAN...), for EXEC's filter.
  #queuedListings: Array<Listing | undefined> = []
  // On a Cluster, what the client's own connection is for: one transaction, or one blocking command.
  readonly #clusterPin: ClusterPin | undefined
  // Requests received while an earlier one waits for every reply before it (it moves the client to another
  // connection, or resets it); they run in order once it has.
  #held: Held[] | undefined
  #closing = false
  // For CLIENT LIST: the last command, when it came, and how many blocking ones wait for their reply.
  #lastCommand = 'NULL'
  #lastActive = coarseSeconds
  // Made on the client's first blocking request (CLIENT ID, CLIENT LIST's blocked, CLIENT UNBLOCK's id).
  #blockingRequests: BlockingRequests | undefined
  // CLIENT REPLY OFF or SKIP ('skip' silences the request after the SKIP); undefined while replies are on, so
  // that every request's check is one comparison with undefined rather than a string comparison.
  #silencing: Exclude<ReplyMode, 'on'> | undefined

  constructor(socket: Socket, context: SessionContext, id: number) {
    this.id = id
    this.#socket = socket
    this.#context = context
    this.#sharedIndex = id % context.pool.sharedCount
    this.#authenticated = !context.users.required
    this.#db = context.backendDb
    this.#clusterPin = context.cluster === undefined ? undefined : new ClusterPin()
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

  get self(): ProxyClient {
    return this
  }

  get clients(): Iterable<ProxyClient> {
    return this.#context.sessions
  }

  backendId(): Promise<number | undefined> {
    return this.#blockingRequests?.backendId() ?? Promise.resolve(undefined)
  }

  /** What CLIENT LIST shows of this connection (ProxyClient). */
  info(): ClientInfo {
    const socket = this.#socket
    return {
      id: this.id,
      addr: `${socket.remoteAddress}:${socket.remotePort}`,
      laddr: `${socket.localAddress}:${socket.localPort}`,
      name: this.#name,
      ageSeconds: coarseSeconds - this.#createdAt,
      idleSeconds: coarseSeconds - this.#lastActive,
      db: this.#db,
      inMulti: this.#inMulti,
      blocked: this.#blockingRequests?.blocked === true,
      subscribed: this.#tunnel,
      command: this.#lastCommand,
      user: 'default',
      resp: this.#resp3 ? 3 : 2,
    }
  }

  /** Closes the connection (CLIENT KILL): at once, or after `reply` when the client killed itself. */
  kill(reply?: Buffer): void {
    if (reply === undefined) this.#socket.destroy()
    else this.quit(reply)
  }

  /** Sends `argv` to Redis once it settles, Redis's reply relayed in this client's order (CLIENT UNBLOCK). */
  forward(argv: Promise<readonly (Buffer | string)[] | undefined>): void {
    const slot = this.#output.reserve()
    void argv.then((ready) => {
      if (ready === undefined) slot.complete(ZERO_REPLY)
      else this.#send(lookupCommand('client'), 'client', [], encodeRequest(ready), slot)
    })
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
    this.#inMulti = false
    this.#silencing = undefined
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
    // Whether this request's reply is dropped is settled in the order requests came (CLIENT REPLY: the proxy
    // keeps each client's replies in order, so it silences them itself).
    const silencing = this.#silencing
    let silent = false
    // Compared with 'skip' only when set: a string compared with undefined on every request takes V8's generic path.
    if (silencing !== undefined) {
      silent = true
      if (silencing === 'skip') this.#silencing = undefined
    }
    if (request.name === 'client' && !this.#tunnel) {
      const mode = replyMode(request.args)
      if (mode !== undefined) {
        this.#silencing = mode === 'on' ? undefined : mode
        silent = mode !== 'on'
      }
    }
    if (this.#held !== undefined)
      this.#held.push({ run: () => this.#dispatch(request, silent), afterDrain: false })
    else this.#dispatch(request, silent)
  }

  #dispatch(request: Request, silent: boolean): void {
    this.#output.silent = silent
    const name = request.name
    const stats = this.#context.stats
    stats.countCommand(name)
    this.#lastCommand = name
    this.#lastActive = coarseSeconds
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
      } else {
        const refusal = this.#context.reserved.refusal(name, request.args, lookupCommand(name))
        if (refusal === undefined) this.#pinned?.writeRaw(request.raw)
        else this.#tunnelSlot?.push(refusal)
      }
      return
    }
    const args = request.args
    const spec = lookupCommand(name)
    // A command that reads or writes keys (most of the traffic) is none of the connection's own commands (AUTH,
    // CLIENT, SELECT, MULTI...): one look at the table spares it their name comparisons.
    const keyed = spec !== undefined && spec.access !== 'none' && !spec.transaction
    // Without users of the proxy's own, AUTH is Redis's: it logs in the client's own connection (below).
    const redisAuth = !keyed && name === 'auth' && !this.#context.users.required
    const timing = keyed || redisAuth ? undefined : connectionCommandTiming(name, request)
    if (timing === 'now') {
      runConnectionCommand(this, name, request)
      return
    }
    if (timing === 'after-replies') {
      this.#whenDrained(() => runConnectionCommand(this, name, request))
      return
    }
    const refusal = this.#context.reserved.refusal(name, args, spec)
    if (refusal !== undefined) {
      this.reply(refusal)
      if (this.#state.inMulti) this.#pinned?.send(this.#context.reserved.abortTransaction, DISCARD_REPLY)
      return
    }
    const clusterPin = this.#clusterPin
    const heldMulti = clusterPin?.heldMulti
    if (heldMulti !== undefined && this.#pinned === undefined && !spec?.transaction) {
      // The transaction's first command names its master: MULTI is sent there first, then the command.
      this.#ensurePinned(slotsOf(spec, args)[0] ?? 0)
      clusterPin?.pinnedForTransaction()
      this.#whenDrained(() => {
        clusterPin?.multiSent()
        this.#pinned?.send(heldMulti, DISCARD_REPLY)
        this.#dispatch(request, silent)
      })
      return
    }
    // Read only for the command table's pubsub and admin commands: the pass-through path asks nothing more.
    if ((spec?.pubsub === true || spec?.admin === true) && this.#tunnelled(spec, name, request)) return
    if (clusterPin !== undefined && this.#pinned === undefined && spec?.transaction === true) {
      const answer = clusterPin.beforeMaster(name, request.raw)
      if (answer !== undefined) {
        this.#context.agent.router.route(name, args, this.#state, false)
        this.#inMulti = name === 'multi'
        if (this.#inMulti) this.#queuedListings = []
        this.reply(answer)
        return
      }
    }
    if (this.#pinned === undefined && spec !== undefined) {
      // A script on a standalone Redis too (runsScript); on a Cluster it stays on the shared connections, where a
      // pin would hold the client to one master. Scripts name their keys by count (singleKey -1): a one-key
      // command, most of the traffic, is settled without the name lookup.
      const script = this.#context.cluster === undefined && spec.singleKey < 0 && runsScript(name)
      if (
        spec.transaction ||
        isBlocking(spec, args) ||
        script ||
        (!keyed && (name === 'select' || redisAuth))
      ) {
        // Pinned first, so that the request runs on the new connection once the replies before it are in. On a
        // Cluster, to the master of the command's first key (a transaction must keep to one slot's master).
        this.#ensurePinned(slotsOf(spec, args)[0] ?? 0)
        clusterPin?.pinnedFor(spec, args)
        this.#whenDrained(() => this.#dispatch(request, silent))
        return
      }
    }
    if (keyed) {
      if (this.#inMulti) this.#queuedListings.push(listingOf(name, args))
    } else if (name === 'select') this.#db = Number(args[0]?.toString())
    else if (name === 'multi') {
      this.#inMulti = true
      this.#queuedListings = []
    } else if (name === 'exec' || name === 'discard') this.#inMulti = false
    else if (this.#inMulti) this.#queuedListings.push(listingOf(name, args))
    const route =
      this.#db !== this.#context.backendDb || this.#context.l1Held()
        ? undefined
        : this.#context.agent.router.route(name, args, this.#state, false, spec)
    // The two routes of most requests are carried here, so that they run without #carry's call.
    if (route === undefined) this.#sendUnchanged(spec, name, args, request, undefined)
    else if (route.kind === 'served') this.#serve(route, spec, args, undefined)
    else this.#carry(route, spec, name, args, request, undefined)
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
    if (route === undefined) {
      this.#sendUnchanged(spec, name, args, request, reserved)
      return
    }
    switch (route.kind) {
      case 'served': {
        this.#serve(route, spec, args, reserved)
        return
      }
      case 'deferred': {
        const slot = reserved ?? this.#output.reserve()
        const encode = replyEncoder(this.#resp3, spec, args)
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
        const encode = replyEncoder(this.#resp3, spec, args)
        const slot = reserved ?? this.#output.reserve()
        this.#send(spec, name, sent, bytes, new SettledSink(slot, route.settle, encode))
        this.#afterSent(spec, name, sent)
        return
      }
    }
  }

  // A request the core leaves alone: to Redis as it came, with Heatsink's own names left out of listings.
  #sendUnchanged(
    spec: CommandSpec | undefined,
    name: string,
    args: Buffer[],
    request: Request,
    reserved: ReplySlot | undefined,
  ): void {
    const slot = reserved ?? this.#output.reserve()
    // A one-key command's reply lists no names: only keyless ones (KEYS, SCAN, PUBSUB, EXEC) are looked at.
    const sink =
      spec !== undefined && spec.singleKey >= 0
        ? slot
        : name === 'exec'
          ? withoutReservedInExec(this.#context.reserved, this.#queuedListings, slot, this.#resp3)
          : withoutReserved(this.#context.reserved, name, args, slot, this.#resp3)
    this.#send(spec, name, args, request.raw, sink)
    this.#afterSent(spec, name, args)
  }

  // A reply the core has (L1): written in the client's protocol, in its place among the replies.
  #serve(
    route: ServedRoute,
    spec: CommandSpec | undefined,
    args: Buffer[],
    reserved: ReplySlot | undefined,
  ): void {
    const stats = this.#context.stats
    if (route.key !== undefined) stats.countServed(route.key)
    else stats.served++
    const shape = spec?.reply
    const reply = asStatus(shape, route.reply, false)
    // A one-key hit is L1's own reply object, whose bytes are worth keeping; MGET's array is new every time.
    const bytes = this.#resp3
      ? resp3Bytes(reply, resp3Shape(shape, args))
      : route.key !== undefined
        ? cachedReplyBytes(reply)
        : encodeOnce(reply)
    if (reserved === undefined) this.#output.reply(bytes)
    else reserved.complete(bytes)
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

  /**
   * The commands that make a connection a tunnel (subscriptions, replication), and UNSUBSCRIBE and its kin on a
   * connection subscribed to nothing (outside MULTI, where Redis would queue them); true when the request was
   * handled here.
   */
  #tunnelled(spec: CommandSpec, name: string, request: Request): boolean {
    if (UNSUBSCRIBE_COMMANDS.has(name) && !this.#inMulti) {
      this.reply(notSubscribedReply(name, request.args, this.#resp3))
      return true
    }
    if (!TUNNEL_COMMANDS.has(name)) return false
    // On the client's own connection already, the tunnel follows its earlier requests there at once; a new
    // connection waits for the replies on the shared one, so that it cannot overtake them at Redis. On a Cluster,
    // to the master of the channel's slot for SSUBSCRIBE (shard channels live there).
    if (this.#pinned !== undefined) this.#startTunnel(request)
    else {
      this.#ensurePinned(slotsOf(spec, request.args)[0] ?? 0)
      this.#whenDrained(() => this.#startTunnel(request))
    }
    return true
  }

  // From here the connection relays whatever Redis sends (replies and pushed messages) through one slot that stays
  // open behind every earlier reply.
  #startTunnel(request: Request): void {
    const pinned = this.#ensurePinned(0)
    this.#tunnel = true
    // Redis sends what a subscription pushes even to a client that turned its replies off.
    this.#output.silent = false
    this.#silencing = undefined
    const slot = this.#output.reserve()
    this.#tunnelSlot = slot
    const relay = (chunk: Buffer) => slot.push(chunk)
    // Replication streams an RDB file and then commands, not replies: relayed as they come, never scanned.
    const replication = request.name === 'sync' || request.name === 'psync'
    pinned.tunnel(replication ? relay : withoutReservedMessages(this.#context.reserved, relay))
    pinned.writeRaw(request.raw)
  }

  // A Cluster transaction, or the blocking command the client's own connection was taken for, is sent: once it
  // is answered, back to the shared connections (the next command may be for another master).
  #afterSent(spec: CommandSpec | undefined, name: string, args: Buffer[]): void {
    if (this.#clusterPin?.endsAfter(spec, name, args) === true) this.#whenDrained(() => this.#endClusterPin())
  }

  #endClusterPin(): void {
    if (this.#clusterPin?.active === true) this.#unpin()
  }

  #ensurePinned(slot: number): BackendConnection {
    // The connection's state (a transaction, subscriptions, the database) is gone: so is the client's.
    const onLost = () => {
      if (this.#pinned !== undefined) this.#socket.destroy()
    }
    const cluster = this.#context.cluster
    if (this.#pinned !== undefined) return this.#pinned
    const pinned =
      cluster === undefined
        ? this.#context.pool.dedicated(onLost, this.#resp3)
        : cluster.dedicated(slot, onLost, this.#resp3)
    this.#pinned = pinned
    return pinned
  }

  // On the client's own connection when it has one, else on the shared connections (shared-route.ts).
  #send(spec: CommandSpec | undefined, name: string, args: Buffer[], bytes: Buffer, sink: ReplySink): void {
    const pinned = this.#pinned
    if (pinned !== undefined) {
      // Inside MULTI nothing blocks (and Redis would queue the CLIENT ID sent ahead).
      if (spec !== undefined && !this.#inMulti && isBlocking(spec, args)) {
        if (this.#blockingRequests === undefined) this.#blockingRequests = new BlockingRequests()
        this.#blockingRequests.send(pinned, bytes, sink, () => this.#pinned)
      } else pinned.send(bytes, sink)
    } else sendShared(this.#context, this.#sharedIndex, this.#resp3, spec, name, args, bytes, sink)
  }

  #unpin(): void {
    const pinned = this.#pinned
    this.#pinned = undefined
    this.#blockingRequests?.connectionGone()
    this.#tunnel = false
    this.#tunnelSlot?.finish()
    this.#tunnelSlot = undefined
    this.#clusterPin?.unpinned()
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

// Whole seconds since the process started, kept by a timer rather than read per request: CLIENT LIST's age and
// idle need no finer clock (Redis keeps a cached clock for them too).
let coarseSeconds = 0
setInterval(() => {
  coarseSeconds++
}, 1000).unref()
const ZERO_REPLY = Buffer.from(':0\r\n')
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
