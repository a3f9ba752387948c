import { CACHEABLE_COMMANDS, type CommandSpec, freshReply, lookupCommand } from '@heatsink/commands'
import type { Callback, Command } from 'ioredis'
import type { Agent } from '../agent.js'
import { ConnectionState, type Route } from '../data-plane/route.js'
import type { HotKey } from '../registry/hot-key.js'
import type { RoutableCommand } from './carry-route.js'
import { type HeatsinkHandle, handleFor } from './heatsink-handle.js'
import { detachAgent } from './process-agents.js'

/** Where a Heatsink client keeps its front door (a symbol, so it never meets an ioredis property). */
export const FRONT_DOOR: unique symbol = Symbol('heatsink front door')

/** A client class of ioredis's with a front door. */
export interface WithFrontDoor {
  [FRONT_DOOR]: FrontDoor
  options: { keyPrefix?: string }
}

// ioredis internals the front door reads: the current database, and commands waiting for the next
// autopipeline flush.
interface Internals {
  status: string
  condition?: { select: number; subscriber?: unknown }
  _autoPipelines: Map<string, unknown>
}

// Marks a command already routed once: ioredis sends a command again after a reconnect (offline queue, resend
// of unanswered commands), and it must not be counted, evicted or wrapped twice. A property only routed
// commands get, rather than a WeakSet, so the common command pays a failed property load, not a hash.
const ROUTED: unique symbol = Symbol('heatsink routed')
type Marked = { [ROUTED]?: true }

/**
 * What makes an ioredis Redis or Cluster a Heatsink client: its commands go through the process agent's
 * data-plane core at sendCommand, ioredis's one choke point (direct calls, pipelines, transactions,
 * autopipelining, scripts and `call` all reach it), so every current and future method is covered.
 */
export class FrontDoor {
  readonly handle: HeatsinkHandle
  readonly state = new ConnectionState()
  #agent: Agent | undefined
  readonly #client: object
  readonly #db: number
  // ioredis's options object is in V8's dictionary mode (dozens of properties), so reading keyPrefix there on every
  // read method's call was a slow generic load: the prefix is read once, as ioredis users set it, at construction.
  readonly #keyPrefix: string | undefined

  constructor(client: NodeJS.EventEmitter, agent: Agent | undefined, db: number) {
    this.#client = client
    this.#agent = agent
    this.#db = db
    this.#keyPrefix = (client as unknown as Partial<WithFrontDoor>).options?.keyPrefix || undefined
    client.on('close', () => this.#agent?.router.connectionClosed(this.state))
    this.handle = handleFor(
      () => this.#agent,
      () => this.detach(),
    )
  }

  /**
   * The core's route for a command of this client, or undefined when ioredis should send it as it is (the
   * client is not ready, is on another database, or the command was routed before and is being re-sent).
   */
  route(client: unknown, command: Command): Route | undefined {
    const agent = this.#agent
    // Not ready: ioredis queues the command or rejects it (closed, offline queue off), as it would without
    // Heatsink; a queued command comes back here when the connection is ready, and is routed then.
    if (agent === undefined || !this.#ready(client) || (command as Marked)[ROUTED] === true) return undefined
    const routable = command as unknown as RoutableCommand
    const route = agent.router.route(routable.name, routable.args, this.state, routable.inTransaction)
    if (route !== undefined) (command as Marked)[ROUTED] = true
    return route
  }

  /**
   * The registered key a read method's call on `key` names when it is local_cache, so that the call may be an
   * L1 hit; else undefined (one Map lookup, none while no key is local_cache). String keys only: a Buffer may not
   * be UTF-8.
   */
  localCacheKey(key: unknown): HotKey | undefined {
    const agent = this.#agent
    if (typeof key !== 'string' || agent === undefined || !agent.servesFromL1) return undefined
    const prefix = this.#keyPrefix
    return agent.router.localCacheKey(prefix ? prefix + key : key)
  }

  /**
   * The answer from L1 to a cacheable read method's call on `key`, which names the local_cache key `hot` (see
   * localCacheKey; `args`: the call's arguments, undefined when the key is the only one), or undefined. Only
   * while nothing of this client waits in an autopipeline (a write there has not evicted yet), outside MULTI,
   * with no script of this client awaiting its barrier (see ScriptBarriers), and for string and number
   * arguments (ioredis flattens arrays, and a Buffer may not be UTF-8).
   */
  fastRead(
    client: WithFrontDoor,
    spec: CommandSpec,
    hot: HotKey,
    key: string,
    args?: unknown[],
  ): Promise<unknown> | undefined {
    const agent = this.#agent
    if (agent === undefined) return undefined
    const state = this.state
    if (state.inMulti || state.unsettledScripts > 0) return undefined
    if ((client as unknown as Internals)._autoPipelines.size > 0 || !this.#ready(client)) return undefined
    let callback: Callback<unknown> | undefined
    if (args !== undefined) {
      const last = args.length - 1
      if (typeof args[last] === 'function') {
        callback = args[last] as Callback<unknown>
        args = args.slice(0, last)
      }
      for (let i = 1; i < args.length; i++) {
        const type = typeof args[i]
        if (type !== 'string' && type !== 'number') return undefined
      }
    }
    // The caller's own string when it is the key's whole name (no keyPrefix: the same length): the recorder most
    // likely admitted that very string, and then matches it by identity rather than by comparing characters.
    const cached = agent.router.peek(spec, key.length === hot.key.length ? key : hot.key, hot, args)
    if (cached === undefined) return undefined
    const reply = Promise.resolve(freshReply(cached.decoded(spec)))
    if (callback !== undefined) reply.then((value) => callBack(callback, value))
    return reply
  }

  /** Stops routing this client; the last client of the process agent closes it. */
  async detach(): Promise<void> {
    const agent = this.#agent
    if (agent === undefined) return
    this.#agent = undefined
    await detachAgent(this.#client, agent)
  }

  // Connected, and on the agent's database: another one (after SELECT) holds other keys under the same names,
  // so commands there pass through untouched.
  #ready(client: unknown): boolean {
    const internals = client as Internals
    const condition = internals.condition
    // A subscribed connection takes only subscriber commands: ioredis must be the one to refuse the others.
    if (internals.status !== 'ready' || condition?.subscriber) return false
    return (condition?.select ?? this.#db) === this.#db
  }
}

/**
 * Gives `prototype`'s cacheable read methods (GET, HGETALL, LRANGE, ...) the fast path: an L1 hit answered
 * before ioredis builds a Command or queues it for an autopipeline, which is most of a hit's cost. Anything
 * else calls the method ioredis defined.
 */
export function installFastReads(prototype: object, ioredisPrototype: object): void {
  for (const command of CACHEABLE_COMMANDS) {
    const own = (ioredisPrototype as Record<string, Method>)[command]
    const spec = lookupCommand(command)
    if (spec?.singleKey !== 0 || typeof own !== 'function') continue
    // `arguments`, not rest parameters: a call that is not an L1 hit then costs no array of its own.
    const fast = function (this: WithFrontDoor) {
      const door = this[FRONT_DOOR]
      // biome-ignore lint/complexity/noArguments: read in place, so a call that is not a hit builds no array
      const key = arguments[0]
      const hot = door.localCacheKey(key)
      if (hot !== undefined) {
        // biome-ignore lint/complexity/noArguments: copied only for a call with more than its key
        const args = arguments.length > 1 ? Array.prototype.slice.call(arguments) : undefined
        const hit = door.fastRead(this, spec, hot, key as string, args)
        if (hit !== undefined) return hit
      }
      // biome-ignore lint/complexity/noArguments: forwarded whole
      return own.apply(this, arguments as unknown as unknown[])
    }
    Object.defineProperty(prototype, command, { value: fast, writable: true, configurable: true })
  }
}

type Method = (this: WithFrontDoor, ...args: unknown[]) => unknown

// As ioredis (standard-as-callback): a callback that throws surfaces as an uncaught exception, not as a
// rejection of the promise the caller may also hold.
function callBack(callback: Callback<unknown>, value: unknown): void {
  try {
    callback(null, value)
  } catch (error) {
    process.nextTick(() => {
      throw error
    })
  }
}
