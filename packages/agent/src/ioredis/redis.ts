import { keepSocketErrorsHandled } from '@heatsink/protocol'
import { type Command, Redis as IORedis, type RedisOptions } from 'ioredis'
import type { Agent } from '../agent.js'
import { followPrimary } from '../connections/sentinel-options.js'
import { carryRoute, type RoutableCommand } from './carry-route.js'
import { redisDeployment } from './deployment-key.js'
import { FRONT_DOOR, FrontDoor, installFastReads } from './front-door.js'
import type { HeatsinkHandle } from './heatsink-handle.js'
import {
  attachAgent,
  dataConnectionName,
  type HeatsinkOptions,
  ownConnectionOptions,
} from './process-agents.js'

/** ioredis's options, with Heatsink's own under `heatsink` (all optional; `false` turns Heatsink off). */
export interface HeatsinkRedisOptions extends RedisOptions {
  heatsink?: HeatsinkOptions | false
}

/**
 * ioredis's Redis with every command going through Heatsink's data-plane core (see FrontDoor): switching is an
 * import change. Heatsink's own API is on `redis.heatsink`.
 */
export class Redis extends IORedis {
  readonly [FRONT_DOOR]: FrontDoor

  constructor(...args: unknown[]) {
    super(...(args as []))
    keepSocketErrorsHandled(this)
    const options = this.options as HeatsinkRedisOptions
    const heatsink = options.heatsink
    const db = options.db ?? 0
    let agent: Agent | undefined
    try {
      agent =
        heatsink === false
          ? undefined
          : attachAgent(this, redisDeployment(options), heatsink ?? {}, () => {
              return keepSocketErrorsHandled(
                new IORedis({
                  ...ownConnectionOptions(options),
                  ...followPrimary(options),
                  lazyConnect: false,
                  connectionName: dataConnectionName(heatsink),
                }),
              )
            })
    } catch (error) {
      // Bad Heatsink options: the connection ioredis opened must not outlive the failed constructor.
      this.disconnect()
      throw error
    }
    this[FRONT_DOOR] = new FrontDoor(this, agent, db)
    // An ended client (quit, disconnect) lets the process agent go once nobody else uses it.
    if (agent !== undefined) this.once('end', () => void this[FRONT_DOOR].detach())
  }

  /** Heatsink's API for this client: ready, getOrLoad, mitigation, stats, close. */
  get heatsink(): HeatsinkHandle {
    return this[FRONT_DOOR].handle
  }

  /** A new client with this one's options (ioredis's duplicate builds its own class; this builds Heatsink's). */
  override duplicate(override?: Partial<HeatsinkRedisOptions>): Redis {
    return new Redis({ ...this.options, ...override })
  }

  // The common case, a command sent as it is, goes straight to ioredis's own sendCommand.
  override sendCommand(command: Command, stream?: unknown): unknown {
    const route = this[FRONT_DOOR].route(this, command)
    if (route === undefined) return super.sendCommand(command, stream as never)
    return carryRoute(route, command as unknown as RoutableCommand, stream, this.#send)
  }

  readonly #send = (command: Command, stream?: unknown): unknown =>
    super.sendCommand(command, stream as never)

  static {
    installFastReads(Redis.prototype, IORedis.prototype)
  }
}
