import type { Agent } from '@heatsink/agent'
import type { RedisOptions } from 'ioredis'
import { oneCommand } from './backend/one-command.js'

// How often a hold checks whether the agent has moved to the new primary.
const CHECK_MS = 25
const NOT_PERMITTED = Symbol('NOPERM')

/**
 * Keeps L1 out of the way while the backend moves to a new primary. L1 is kept true by the agent's tracking
 * connection, which is on the old primary until ioredis moves it: writes the new primary takes meanwhile would
 * not invalidate it. From the switch, every request goes straight to Redis (L1 neither serves nor fills) until
 * the agent's invalidation channels are up and the new primary lists the agent's tracking connection
 * (`heatsink:track:<agentId>`), at which point the agent has emptied L1 and tracks the new primary.
 */
export class L1SwitchHold {
  readonly #agent: Agent
  readonly #trackingName: string
  #held = false
  #generation = 0

  constructor(agent: Agent) {
    this.#agent = agent
    this.#trackingName = `name=heatsink:track:${agent.agentId.replace(/[^A-Za-z0-9_.:-]/g, '_')} `
  }

  /** Whether requests must bypass L1 now. */
  get held(): boolean {
    return this.#held
  }

  /** Holds L1 from now until the agent tracks the primary that `primary` options reach. */
  hold(primary: RedisOptions): void {
    this.#held = true
    const generation = ++this.#generation
    const check = async () => {
      if (generation !== this.#generation) return
      if (this.#agent.stats().invalidationChannelUp && (await this.#tracked(primary))) {
        if (generation === this.#generation) this.#held = false
        return
      }
      setTimeout(check, CHECK_MS).unref()
    }
    setTimeout(check, CHECK_MS).unref()
  }

  /** Stops any hold's checks (the proxy is closing). */
  close(): void {
    this.#generation++
  }

  async #tracked(primary: RedisOptions): Promise<boolean> {
    // A server that refuses CLIENT LIST (an ACL without it) cannot tell; the channels being up has to do then.
    const list = await oneCommand(primary, (client) =>
      client.call('CLIENT', 'LIST', 'TYPE', 'normal').catch((error: Error) => {
        if (error.message.startsWith('NOPERM')) return NOT_PERMITTED
        throw error
      }),
    )
    return list === NOT_PERMITTED || (typeof list === 'string' && list.includes(this.#trackingName))
  }
}
