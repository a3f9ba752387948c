import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { ServiceStartError, ServiceUnavailableError } from './errors.js'
import { onProcessExit } from './exit-cleanup.js'
import { findExecutable, pathDirs } from './find-executable.js'
import { freePort } from './free-port.js'
import type { ClusterNode } from './redis-cluster.js'
import { type StartedRedisProcess, startRedisProcess } from './redis-process.js'
import type { ServiceLog } from './running-service.js'
import { ServerProcess } from './server-process.js'
import { waitUntil } from './wait-until.js'

/** Options of startRedisSentinel. */
export interface RedisSentinelOptions {
  /** The name Sentinel monitors the primary under; default `mymaster`. */
  readonly masterName?: string
  /** Replicas of the primary; default 1. */
  readonly replicas?: number
  /** Sentinels, each voting; the quorum is a majority. Default 3. */
  readonly sentinels?: number
  /** How long a primary stays silent before Sentinel calls it down; default 1000 ms (tests want quick failovers). */
  readonly downAfterMs?: number
  readonly log?: ServiceLog
  /** Directories searched for redis-server, replacing PATH. */
  readonly binDirs?: readonly string[]
  /** How long the servers and sentinels may take to start and agree; default 30 s. */
  readonly startTimeoutMs?: number
}

/** A data server of the deployment: its address, and a crash for failover tests. */
export interface SentinelDataServer extends ClusterNode {
  /** Kills the server with SIGKILL, as a crash would, and waits until it has exited. */
  crash(): Promise<void>
}

/** A running private Sentinel deployment: a primary, its replicas and the sentinels that watch them. */
export interface RedisSentinel {
  readonly masterName: string
  /** The sentinels' addresses, as ioredis' `sentinels` option takes them. */
  readonly sentinels: ClusterNode[]
  /** The primary and replicas in start order (the first was the primary at start). */
  readonly servers: SentinelDataServer[]
  /** The primary's address as the sentinels report it now. */
  primary(): Promise<ClusterNode>
  /** Kills every server and sentinel and removes their files. */
  stop(): Promise<void>
}

/**
 * Starts a private Sentinel deployment on free loopback ports: a primary, `replicas` replicas of it, and
 * `sentinels` sentinels monitoring it, ready once every sentinel knows every replica and the other sentinels.
 */
export async function startRedisSentinel(options: RedisSentinelOptions = {}): Promise<RedisSentinel> {
  const masterName = options.masterName ?? 'mymaster'
  const replicas = options.replicas ?? 1
  const sentinelCount = options.sentinels ?? 3
  if (!Number.isInteger(replicas) || replicas < 0)
    throw new RangeError(`replicas must be ≥ 0, got ${replicas}`)
  if (!Number.isInteger(sentinelCount) || sentinelCount < 1) {
    throw new RangeError(`sentinels must be ≥ 1, got ${sentinelCount}`)
  }
  const log = options.log ?? (() => {})
  const timeoutMs = options.startTimeoutMs ?? 30_000
  const dirs = options.binDirs ?? pathDirs()
  const redisServer = findExecutable('redis-server', dirs)
  if (redisServer === undefined) throw missingBinary(dirs)

  const base = mkdtempSync(join(tmpdir(), 'heatsink-redis-sentinel-'))
  const removeBase = () => rmSync(base, { recursive: true, force: true })
  const forgetBase = onProcessExit(removeBase)
  const data: StartedRedisProcess[] = []
  const watchers: { port: number; process: ServerProcess }[] = []
  const stop = async () => {
    await Promise.all([...data, ...watchers].map((started) => started.process.stop()))
    forgetBase()
    removeBase()
  }

  try {
    for (let index = 0; index <= replicas; index++) {
      const dir = join(base, `server-${index}`)
      mkdirSync(dir)
      const primaryPort = data[0]?.port
      const server = await startRedisProcess({
        binary: redisServer,
        dir,
        service: 'redis-sentinel',
        timeoutMs,
        extraArgs: () => (primaryPort === undefined ? [] : ['--replicaof', '127.0.0.1', String(primaryPort)]),
      })
      server.process.unref()
      data.push(server)
    }
    const primaryPort = data[0]?.port as number
    for (let index = 0; index < sentinelCount; index++) {
      watchers.push(
        await startSentinel(redisServer, base, index, masterName, primaryPort, sentinelCount, options),
      )
    }
    const ready = async () =>
      (await replicasSynced(data.slice(1))) &&
      (await sentinelsAgree(watchers, masterName, replicas, sentinelCount))
    if (!(await waitUntil(ready, { timeoutMs, intervalMs: 100 }))) {
      const output = watchers.map((watcher) => watcher.process.output()).join('\n')
      const reason = `the replicas did not sync, or the sentinels did not all see ${replicas} replicas and ${sentinelCount - 1} other sentinels, within ${timeoutMs} ms`
      throw new ServiceStartError('redis-sentinel', watchers[0]?.process.line ?? redisServer, output, reason)
    }
  } catch (error) {
    await stop()
    throw error
  }

  const sentinels = watchers.map((watcher) => ({ host: '127.0.0.1', port: watcher.port }))
  const servers = data.map((server) => ({
    host: '127.0.0.1',
    port: server.port,
    crash: () => server.process.crash(),
  }))
  log(
    `redis-sentinel: ${masterName} at 127.0.0.1:${data[0]?.port}, sentinels at ${sentinels.map((s) => s.port)}`,
  )
  let stopping: Promise<void> | undefined
  return {
    masterName,
    sentinels,
    servers,
    primary: () => askPrimary(sentinels, masterName),
    stop: () => (stopping ??= stop()),
  }
}

async function startSentinel(
  redisServer: string,
  base: string,
  index: number,
  masterName: string,
  primaryPort: number,
  sentinelCount: number,
  options: RedisSentinelOptions,
): Promise<{ port: number; process: ServerProcess }> {
  const dir = join(base, `sentinel-${index}`)
  mkdirSync(dir)
  const port = await freePort()
  const config = join(dir, 'sentinel.conf')
  // Sentinel rewrites its own file (discovered replicas, peers, epochs), so each sentinel needs its own.
  writeFileSync(
    config,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${masterName} 127.0.0.1 ${primaryPort} ${Math.floor(sentinelCount / 2) + 1}`,
      `sentinel down-after-milliseconds ${masterName} ${options.downAfterMs ?? 1000}`,
      `sentinel failover-timeout ${masterName} 10000`,
      '',
    ].join('\n'),
  )
  const sentinel = new ServerProcess(redisServer, [config, '--sentinel'], dir)
  sentinel.unref()
  const timeoutMs = options.startTimeoutMs ?? 30_000
  const ready = await waitUntil(() => sentinelPing(port), { timeoutMs, giveUp: () => sentinel.hasExited })
  if (!ready) {
    await sentinel.stop()
    const reason = 'the sentinel did not answer PING'
    throw new ServiceStartError('redis-sentinel', sentinel.line, sentinel.output(), reason)
  }
  return { port, process: sentinel }
}

async function withClient<T>(port: number, use: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  })
  client.on('error', () => {})
  try {
    await client.connect()
    return await use(client)
  } finally {
    client.disconnect()
  }
}

async function replicasSynced(replicas: readonly StartedRedisProcess[]): Promise<boolean> {
  const links = await Promise.all(
    replicas.map((replica) =>
      withClient(replica.port, async (client) =>
        /master_link_status:up/.test(await client.info('replication')),
      ),
    ),
  )
  return links.every(Boolean)
}

function sentinelPing(port: number): Promise<boolean> {
  return withClient(port, async (client) => (await client.ping()) === 'PONG')
}

async function sentinelsAgree(
  watchers: readonly { port: number }[],
  masterName: string,
  replicas: number,
  sentinelCount: number,
): Promise<boolean> {
  const views = await Promise.all(
    watchers.map((watcher) =>
      withClient(watcher.port, async (client) => {
        const master = (await client.call('SENTINEL', 'MASTER', masterName)) as string[]
        const field = (name: string) => Number(master[master.indexOf(name) + 1])
        return field('num-slaves') === replicas && field('num-other-sentinels') === sentinelCount - 1
      }).catch(() => false),
    ),
  )
  return views.every(Boolean)
}

/** The primary's address per the first sentinel that answers. */
async function askPrimary(sentinels: readonly ClusterNode[], masterName: string): Promise<ClusterNode> {
  for (const sentinel of sentinels) {
    const address = await withClient(sentinel.port, (client) =>
      client.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', masterName),
    ).catch(() => undefined)
    if (Array.isArray(address) && address.length === 2)
      return { host: String(address[0]), port: Number(address[1]) }
  }
  throw new Error(`no sentinel knows a primary for ${masterName}`)
}

function missingBinary(dirs: readonly string[]): ServiceUnavailableError {
  const searched = dirs.length === 0 ? 'no directories' : dirs.join(':')
  const message = [
    `A Redis Sentinel deployment cannot be started here: redis-server is needed (searched ${searched}).`,
    'To get it, install Redis:',
    '  apt-get install -y --no-install-recommends redis-server   (Debian/Ubuntu)',
    '  brew install redis                                         (macOS)',
  ].join('\n')
  return new ServiceUnavailableError('redis-sentinel', undefined, message)
}
