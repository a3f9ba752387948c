import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { connect } from 'node:net'
import { type RedisCluster, ServiceUnavailableError, startRedisCluster } from '@heatsink/devservices'
import { deferred } from '@heatsink/stampede/testing'
import type { TestRedis } from '@heatsink/test'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import type { Agent } from '../../src/agent.js'
import { createAgent } from '../../src/create-agent.js'
import type { AgentLogger, AgentOptions } from '../../src/options/agent-options.js'

/** Promises and loaders a test settles when it chooses. */
export { controlledLoader, deferred } from '@heatsink/stampede/testing'

/** Polls `condition` until it holds; for pub/sub deliveries, whose arrival no test can await directly. */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 2000,
): Promise<number> {
  const start = performance.now()
  for (;;) {
    if (await condition()) return performance.now() - start
    if (performance.now() - start > timeoutMs)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

interface LogLine {
  level: keyof AgentLogger
  message: string
  object: object
}

/** A logger that keeps every line and lets a test await the next line with a given message. */
export function captureLog() {
  const lines: LogLine[] = []
  const waiters: Array<{ message: string; resolve: () => void }> = []
  const write =
    (level: keyof AgentLogger) =>
    (object: object, message: string): void => {
      lines.push({ level, message, object })
      for (const waiter of waiters.splice(0)) {
        if (waiter.message === message) waiter.resolve()
        else waiters.push(waiter)
      }
    }
  const log: AgentLogger = {
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
  }
  return {
    log,
    lines,
    /** Resolves on the next line with this message; call it before causing the line. */
    next(message: string): Promise<void> {
      return new Promise((resolve) => waiters.push({ message, resolve }))
    },
  }
}

/**
 * Watches every command the server runs (MONITOR) so a test can count exactly the ones it cares about, even
 * on a server other tests share. A plain socket, because ioredis' monitor() can mistake MONITOR lines that
 * arrive with its +OK for replies on a busy server. sync() waits until everything sent before it was seen.
 */
export async function startMonitor(url: string) {
  const { hostname, port } = new URL(url)
  const socket = connect({ host: hostname, port: Number(port || 6379) })
  await once(socket, 'connect')
  socket.write('MONITOR\r\n')
  const seen: string[][] = []
  const started = deferred<void>()
  let pending = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk: string) => {
    const lines = (pending + chunk).split('\r\n')
    pending = lines.pop() ?? ''
    for (const line of lines) {
      // +OK once, then one line per command: +1700000000.123456 [0 127.0.0.1:5000] "get" "key"
      if (line === '+OK') started.resolve()
      else if (line.startsWith('+')) seen.push(monitorArgs(line))
    }
  })
  await started.promise
  const marker = new Redis(url)
  return {
    seen,
    count(command: string, key: string): number {
      return seen.filter((args) => args[0]?.toLowerCase() === command && args[1] === key).length
    },
    async sync(): Promise<void> {
      const mark = `sync-${randomBytes(6).toString('hex')}`
      await marker.echo(mark)
      await waitFor(
        () => seen.some((args) => args[0]?.toLowerCase() === 'echo' && args[1] === mark),
        'monitor sync',
      )
    },
    stop(): void {
      socket.destroy()
      marker.disconnect()
    },
  }
}

// The quoted arguments of one MONITOR line, unescaped (\\, \", \xNN and the usual control escapes).
function monitorArgs(line: string): string[] {
  const escapes: Record<string, string> = { n: '\n', r: '\r', t: '\t', a: '\x07', b: '\b' }
  return [...line.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map(([, quoted]) =>
    (quoted ?? '').replace(/\\(x[0-9a-f]{2}|.)/g, (_, code: string) =>
      code.length === 3 ? String.fromCharCode(Number.parseInt(code.slice(1), 16)) : (escapes[code] ?? code),
    ),
  )
}

/** Creates agents on the test's Redis and namespace, closed after each test. */
export function useAgents(redis: () => TestRedis) {
  const agents: Agent[] = []
  afterEach(async () => {
    await Promise.all(agents.splice(0).map((agent) => agent.close()))
  })
  return (options: Partial<AgentOptions<Redis>> = {}): Agent<Redis> => {
    const agent = createAgent({ redis: redis().url, namespace: redis().namespace, ...options })
    agents.push(agent)
    return agent
  }
}

/** The server's client id of the connection with this name (the agent names its own `heatsink:<role>:<id>`). */
export async function clientIdByName(admin: Redis, name: string): Promise<number> {
  const list = (await admin.client('LIST')) as string
  const line = list.split('\n').find((l) => l.includes(` name=${name} `))
  const id = line === undefined ? undefined : /^id=(\d+)/.exec(line)?.[1]
  if (id === undefined) throw new Error(`no client named ${name}`)
  return Number(id)
}

/**
 * A private Redis Cluster of 3 masters (with `replicasPerMaster` replicas each) for the file, stopped after it.
 * Where redis-server is not installed (Redis from a container) there is none to start, and the file's tests are
 * skipped saying so.
 */
export function useRedisCluster(options: { replicasPerMaster?: number } = {}): () => RedisCluster {
  let servers: RedisCluster | undefined
  let unavailable = ''
  beforeAll(async () => {
    try {
      servers = await startRedisCluster({ masters: 3, ...options })
    } catch (error) {
      if (!(error instanceof ServiceUnavailableError)) throw error
      unavailable = error.message
    }
  }, 60_000)
  beforeEach((context) => {
    if (servers === undefined) context.skip(`no Redis Cluster: ${unavailable}`)
  })
  afterAll(async () => {
    await servers?.stop()
  })
  return () => {
    if (servers === undefined) throw new Error('no cluster')
    return servers
  }
}

/** What `run` throws; fails the test when it throws nothing. */
export function thrownBy(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  throw new Error('expected a throw')
}
