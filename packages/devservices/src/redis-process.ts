import { type ServiceName, ServiceStartError } from './errors.js'
import { freePort } from './free-port.js'
import { pingRedis } from './redis-ping.js'
import { ServerProcess } from './server-process.js'
import { waitUntil } from './wait-until.js'

// Another process can take the free port between our probe and redis-server's bind; a fresh port then succeeds.
const PORT_ATTEMPTS = 3

/** Options of startRedisProcess. */
export interface RedisProcessOptions {
  readonly binary: string
  /** Working directory; the server writes nothing else since persistence is off. */
  readonly dir: string
  /** Arguments after the common ones (port, bind, no persistence). */
  readonly extraArgs?: (port: number) => readonly string[]
  readonly service: ServiceName
  readonly timeoutMs: number
  /** Picks the port to try; default any free one. */
  readonly pickPort?: () => Promise<number>
}

/** A redis-server that answers PING on 127.0.0.1:port. */
export interface StartedRedisProcess {
  readonly port: number
  readonly process: ServerProcess
}

/** Starts a redis-server child on a free loopback port and waits until it answers PING. */
export async function startRedisProcess(options: RedisProcessOptions): Promise<StartedRedisProcess> {
  const pickPort = options.pickPort ?? (() => freePort())
  for (let attempt = 1; ; attempt++) {
    const port = await pickPort()
    const args = [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      options.dir,
      ...(options.extraArgs?.(port) ?? []),
    ]
    const server = new ServerProcess(options.binary, args, options.dir)
    const ready = await waitUntil(() => pingRedis(`redis://127.0.0.1:${port}`, 500).then(() => true), {
      timeoutMs: options.timeoutMs,
      giveUp: () => server.hasExited,
    })
    if (ready) return { port, process: server }
    const exitedEarly = server.hasExited
    await server.stop()
    if (exitedEarly && attempt < PORT_ATTEMPTS && /address already in use/i.test(server.output())) continue
    const reason = exitedEarly
      ? 'it exited before answering PING'
      : `it did not answer PING within ${options.timeoutMs} ms`
    throw new ServiceStartError(options.service, server.line, server.output(), reason)
  }
}
