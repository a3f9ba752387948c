import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, type StartedRedisProcess, startRedisProcess } from '@heatsink/devservices'

/**
 * A private redis-server (no persistence) that a test can crash and bring back on the same port, empty: what a
 * Redis restarted without persistence looks like to its clients, which reconnect to the address they knew.
 */
export class RestartableRedis {
  readonly port: number
  readonly #dir: string
  #server: StartedRedisProcess

  private constructor(port: number, dir: string, server: StartedRedisProcess) {
    this.port = port
    this.#dir = dir
    this.#server = server
  }

  /** Starts redis-server on a free loopback port. */
  static async start(): Promise<RestartableRedis> {
    const dir = mkdtempSync(join(tmpdir(), 'heatsink-faults-redis-'))
    const port = await freePort()
    return new RestartableRedis(port, dir, await launch(dir, port))
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  /** SIGKILL: a crash, nothing saved. */
  async crash(): Promise<void> {
    this.#server.process.killNow()
    await this.#server.process.exited
  }

  /** A fresh, empty server on the same port after crash(). */
  async restart(): Promise<void> {
    this.#server = await launch(this.#dir, this.port)
  }

  async stop(): Promise<void> {
    await this.#server.process.stop()
    rmSync(this.#dir, { recursive: true, force: true })
  }
}

function launch(dir: string, port: number): Promise<StartedRedisProcess> {
  // The port was free a moment ago (or was this server's own); startRedisProcess retries only with other ports.
  return startRedisProcess({
    binary: 'redis-server',
    dir,
    service: 'redis',
    timeoutMs: 10_000,
    pickPort: async () => port,
  })
}
