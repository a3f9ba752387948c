import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { ServiceStartError, ServiceUnavailableError } from './errors.js'
import { onProcessExit } from './exit-cleanup.js'
import { findExecutable, pathDirs } from './find-executable.js'
import { freePort, isPortFree } from './free-port.js'
import { type StartedRedisProcess, startRedisProcess } from './redis-process.js'
import { runCommand } from './run-command.js'
import type { ServiceLog } from './running-service.js'
import { waitUntil } from './wait-until.js'

// Redis Cluster nodes talk to each other on port + 10000, so that port must be free too.
const CLUSTER_BUS_OFFSET = 10_000

/** Options of startRedisCluster. */
export interface RedisClusterOptions {
  /** Number of master nodes, at least 3 (redis-cli refuses fewer); default 3. */
  readonly masters?: number
  /** Replicas of each master; default 0. */
  readonly replicasPerMaster?: number
  readonly log?: ServiceLog
  /** Directories searched for redis-server and redis-cli, replacing PATH. */
  readonly binDirs?: readonly string[]
  /** How long the nodes may take to start and agree; default 30 s. */
  readonly startTimeoutMs?: number
}

/** One node of a cluster, as ioredis' `new Cluster(nodes)` takes it. */
export interface ClusterNode {
  readonly host: string
  readonly port: number
}

/** A node of a private cluster: its address, and a crash for failover tests. */
export interface ClusterServer extends ClusterNode {
  /** Kills the node with SIGKILL, as a crash would, and waits until it has exited. */
  crash(): Promise<void>
}

/** A running private Redis Cluster. */
export interface RedisCluster {
  /** Every node, masters and replicas (roles change in a failover: ask CLUSTER NODES). */
  readonly nodes: ClusterNode[]
  readonly servers: ClusterServer[]
  /** Kills every node and removes their files. */
  stop(): Promise<void>
}

/** Starts a private Redis Cluster of `masters` masters, each with `replicasPerMaster` replicas, on free loopback ports. */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const masters = options.masters ?? 3
  const replicas = options.replicasPerMaster ?? 0
  if (!Number.isInteger(masters) || masters < 3) {
    throw new RangeError(`masters must be an integer of at least 3, got ${masters}`)
  }
  if (!Number.isInteger(replicas) || replicas < 0) {
    throw new RangeError(`replicasPerMaster must be an integer of at least 0, got ${replicas}`)
  }
  const log = options.log ?? (() => {})
  const timeoutMs = options.startTimeoutMs ?? 30_000
  const dirs = options.binDirs ?? pathDirs()
  const redisServer = findExecutable('redis-server', dirs)
  const redisCli = findExecutable('redis-cli', dirs)
  if (redisServer === undefined || redisCli === undefined) throw missingBinaries(dirs)

  const base = mkdtempSync(join(tmpdir(), 'heatsink-redis-cluster-'))
  const removeBase = () => rmSync(base, { recursive: true, force: true })
  const forgetBase = onProcessExit(removeBase)
  const started: StartedRedisProcess[] = []
  const stop = async () => {
    await Promise.all(started.map((node) => node.process.stop()))
    forgetBase()
    removeBase()
  }

  try {
    // Sequential: each port is checked while the earlier nodes hold theirs, so no two nodes pick the same one.
    for (let index = 0; index < masters * (1 + replicas); index++) {
      const dir = join(base, `node-${index}`)
      mkdirSync(dir)
      const node = await startRedisProcess({
        binary: redisServer,
        dir,
        service: 'redis-cluster',
        timeoutMs,
        pickPort: clusterPort,
        extraArgs: () => [
          ...['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf')],
          ...['--cluster-node-timeout', '2000'],
        ],
      })
      node.process.unref()
      started.push(node)
    }
    const addresses = started.map((node) => `127.0.0.1:${node.port}`)
    const create = await runCommand(
      redisCli,
      ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicas), '--cluster-yes'],
      { timeoutMs },
    )
    if (create.code !== 0) {
      const reason = `redis-cli --cluster create exited with code ${create.code}`
      throw new ServiceStartError('redis-cluster', create.line, create.output, reason)
    }
    const ready = await waitUntil(() => allNodesOk(started), { timeoutMs, intervalMs: 100 })
    if (!ready) {
      const output = started.map((node) => node.process.output()).join('\n')
      const reason = `the nodes did not all report cluster_state:ok within ${timeoutMs} ms`
      throw new ServiceStartError('redis-cluster', create.line, output, reason)
    }
  } catch (error) {
    await stop()
    throw error
  }

  const nodes = started.map((node) => ({ host: '127.0.0.1', port: node.port }))
  const servers = started.map((node) => ({
    host: '127.0.0.1',
    port: node.port,
    crash: () => node.process.crash(),
  }))
  const shape = replicas === 0 ? `${masters} masters` : `${masters} masters with ${replicas} replicas each`
  log(`redis-cluster: started ${shape} at ${nodes.map((node) => `127.0.0.1:${node.port}`).join(', ')}`)
  let stopping: Promise<void> | undefined
  return { nodes, servers, stop: () => (stopping ??= stop()) }
}

async function clusterPort(): Promise<number> {
  for (;;) {
    const port = await freePort()
    if (port + CLUSTER_BUS_OFFSET <= 65_535 && (await isPortFree(port + CLUSTER_BUS_OFFSET))) return port
  }
}

async function allNodesOk(nodes: readonly StartedRedisProcess[]): Promise<boolean> {
  const states = await Promise.all(nodes.map((node) => nodeState(node.port)))
  return states.every((state) => state === 'ok')
}

/** `ok` once the node sees the whole cluster and, for a replica, has synced with its master. */
async function nodeState(port: number): Promise<string | undefined> {
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
    const info = await client.cluster('INFO')
    const replication = await client.info('replication')
    const synced = !/role:slave/.test(replication) || /master_link_status:up/.test(replication)
    return synced ? /cluster_state:(\w+)/.exec(info)?.[1] : 'syncing'
  } catch {
    return undefined
  } finally {
    client.disconnect()
  }
}

function missingBinaries(dirs: readonly string[]): ServiceUnavailableError {
  const searched = dirs.length === 0 ? 'no directories' : dirs.join(':')
  const message = [
    `A Redis Cluster cannot be started here: redis-server and redis-cli are both needed (searched ${searched}).`,
    'To get them, install Redis:',
    '  apt-get install -y --no-install-recommends redis-server   (Debian/Ubuntu; brings redis-cli)',
    '  brew install redis                                         (macOS)',
  ].join('\n')
  return new ServiceUnavailableError('redis-cluster', undefined, message)
}
