import { type CommandSpec, lookupCommand } from '@heatsink/commands'
import type { Cluster, Command, Redis } from 'ioredis'
import type { CommandRouter } from './data-plane/command-router.js'
import { ConnectionState } from './data-plane/route.js'
import { carryRoute, type RoutableCommand } from './ioredis/carry-route.js'

/** The ioredis methods createAgent's API answers through the router, beside getOrLoad. */
export const AGENT_COMMANDS = [
  'get',
  'set',
  'del',
  'mget',
  'incr',
  'incrby',
  'decr',
  'decrby',
  'sadd',
  'srem',
  'smembers',
  'scard',
  'sismember',
  'zadd',
  'zrem',
  'zscore',
  'zcard',
  'zrange',
  'zrevrange',
] as const

/** One of createAgent's own ioredis methods. */
export type AgentCommand = (typeof AGENT_COMMANDS)[number]

type Method = (...args: unknown[]) => Promise<unknown>

const GET_SPEC = lookupCommand('get') as CommandSpec

/**
 * createAgent's own commands, the data plane's third front door beside the ioredis drop-in and the proxy: each
 * is the data client's own ioredis method (its argument forms, callbacks and reply conversion, from whichever
 * copy of ioredis the client comes), called on a stand-in whose sendCommand hands the command to the router and
 * carries out its route as the drop-in does (carryRoute). So L1, coalescing, split keys, replica reads, write
 * fences and invalidation are the router's, with the same rules and results as through the other two doors.
 * The agent's methods share one ConnectionState: to the router they are one client connection, the data client's.
 */
export function agentCommands(data: Redis | Cluster, router: CommandRouter): Record<AgentCommand, Method> {
  const state = new ConnectionState()
  const send = (command: Command): unknown => data.sendCommand(command)
  // What ioredis's generated methods read of their client: no key prefix (createAgent refuses one) and no
  // autopipelining (it would queue the command on the data client's own pipeline, past the router).
  const door = {
    options: { showFriendlyErrorStack: data.options.showFriendlyErrorStack, enableAutoPipelining: false },
    sendCommand(command: Command): unknown {
      const routable = command as unknown as RoutableCommand
      const route = router.route(routable.name, routable.args, state, false)
      if (route === undefined) return send(command)
      return carryRoute(route, routable, undefined, send)
    },
  }
  const methods = {} as Record<AgentCommand, Method>
  for (const name of AGENT_COMMANDS) {
    const own = (data as unknown as Record<AgentCommand, Method>)[name]
    methods[name] = (...args) => Reflect.apply(own, door, args) as Promise<unknown>
  }
  const get = methods.get
  // GET of a string key with no callback, the hot read: an L1 hit is answered before ioredis builds a Command, as
  // the drop-in's fast reads are (router.peek counts it as route() would). Only while no earlier command of these
  // methods is still being carried out by the router, which a hit must not overtake.
  methods.get = (...args) => {
    const key = args[0]
    if (
      args.length === 1 &&
      typeof key === 'string' &&
      state.tail === undefined &&
      state.splitTail === undefined
    ) {
      const hot = router.localCacheKey(key)
      const cached = hot === undefined ? undefined : router.peek(GET_SPEC, key, hot)
      if (cached !== undefined) {
        return Promise.resolve(cached.decoded(GET_SPEC))
      }
    }
    return get(...args)
  }
  return methods
}
