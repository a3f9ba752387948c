import {
  type CommandLatency,
  type InfoReplica,
  type NodeFigures,
  parseInfo,
  parseInfoPairs,
  parseInfoReplicaLines,
} from '@heatsink/protocol'

/** How many commands' latency percentiles a node shows: its busiest, by calls. */
const LATENCY_COMMANDS = 8

/** What one INFO answer says, with the local time it arrived; rates come from two of these. */
export interface NodeReading {
  /** performance.now() when the answer arrived. */
  readonly at: number
  readonly role: 'master' | 'replica'
  readonly commands: number
  readonly cpuSeconds: number
  readonly usedMemory: number
  readonly maxmemory: number
  readonly connectedClients: number
  readonly blockedClients: number
  readonly keyspaceHits: number
  readonly keyspaceMisses: number
  readonly netInput: number
  readonly netOutput: number
  readonly evictedKeys: number
  /** A master's replication offset; a replica's own (slave_repl_offset). */
  readonly replicationOffset: number
  /** The replicas a master lists, with their acknowledged offsets and lag. */
  readonly replicas: readonly InfoReplica[]
  readonly latency: CommandLatency[]
}

/** Reads an `INFO default commandstats latencystats` answer. */
export function readInfo(info: string, at: number): NodeReading {
  const fields = parseInfo(info)
  const number = (name: string) => {
    const value = Number(fields.get(name))
    return Number.isFinite(value) ? value : 0
  }
  const role = fields.get('role') === 'slave' ? 'replica' : 'master'
  return {
    at,
    role,
    commands: number('total_commands_processed'),
    cpuSeconds: number('used_cpu_sys') + number('used_cpu_user'),
    usedMemory: number('used_memory'),
    maxmemory: number('maxmemory'),
    connectedClients: number('connected_clients'),
    blockedClients: number('blocked_clients'),
    keyspaceHits: number('keyspace_hits'),
    keyspaceMisses: number('keyspace_misses'),
    netInput: number('total_net_input_bytes'),
    netOutput: number('total_net_output_bytes'),
    evictedKeys: number('evicted_keys'),
    replicationOffset: number(role === 'replica' ? 'slave_repl_offset' : 'master_repl_offset'),
    replicas: role === 'master' ? parseInfoReplicaLines(info) : [],
    latency: latencyOf(fields),
  }
}

/**
 * The figures of `current`, its rates over the time since `previous` (none without one, or after a restart, when
 * the counters went back). `master` is the reading of the master a replica follows, for its lag.
 */
export function figuresOf(
  node: string,
  current: NodeReading,
  previous: NodeReading | undefined,
  master: NodeReading | undefined,
): NodeFigures {
  const seconds = previous === undefined ? 0 : (current.at - previous.at) / 1000
  const usable = previous !== undefined && seconds > 0 && current.commands >= previous.commands
  const rate = (value: (reading: NodeReading) => number) =>
    usable ? Math.max(0, (value(current) - value(previous)) / seconds) : null
  const acknowledged = master?.replicas.find((replica) => replica.address === node)
  return {
    opsPerSecond: rate((r) => r.commands),
    cpuRatio: rate((r) => r.cpuSeconds),
    usedMemoryBytes: current.usedMemory,
    maxmemoryBytes: current.maxmemory,
    connectedClients: current.connectedClients,
    blockedClients: current.blockedClients,
    keyspaceHitsPerSecond: rate((r) => r.keyspaceHits),
    keyspaceMissesPerSecond: rate((r) => r.keyspaceMisses),
    networkInBytesPerSecond: rate((r) => r.netInput),
    networkOutBytesPerSecond: rate((r) => r.netOutput),
    evictedKeys: current.evictedKeys,
    evictedKeysPerSecond: rate((r) => r.evictedKeys),
    latency: current.latency,
    replicationLagSeconds: current.role === 'replica' ? (acknowledged?.lagSeconds ?? null) : null,
    replicationBehindBytes:
      current.role === 'replica' && master !== undefined
        ? Math.max(0, master.replicationOffset - (acknowledged?.offset ?? current.replicationOffset))
        : null,
  }
}

// latency_percentiles_usec_<command>:p50=...,p99=...,p99.9=... beside cmdstat_<command>:calls=...
function latencyOf(fields: Map<string, string>): CommandLatency[] {
  const found: CommandLatency[] = []
  for (const [field, value] of fields) {
    if (!field.startsWith('latency_percentiles_usec_')) continue
    const command = field.slice('latency_percentiles_usec_'.length)
    const percentiles = parseInfoPairs(value)
    const calls = Number(parseInfoPairs(fields.get(`cmdstat_${command}`) ?? '').get('calls') ?? 0)
    const at = (name: string) => {
      const microseconds = Number(percentiles.get(name))
      return Number.isFinite(microseconds) ? microseconds : null
    }
    found.push({ command, calls, p50Usec: at('p50'), p99Usec: at('p99'), p999Usec: at('p99.9') })
  }
  return found.sort((a, b) => b.calls - a.calls).slice(0, LATENCY_COMMANDS)
}
