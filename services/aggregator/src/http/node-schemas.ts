import { Mitigation } from '@heatsink/protocol'
import { z } from 'zod'

// Schemas of GET /nodes and GET /nodes/{node} (types in @heatsink/protocol's node-view.ts, which the dashboard and
// the CLI read): the OpenAPI document, and the check that what is served has that shape.

const perSecond = (what: string) => z.number().min(0).nullable().describe(`${what}; null on a first sample`)

const CommandLatencySchema = z.object({
  command: z.string(),
  calls: z.int().min(0).describe('Calls since the node started (or CONFIG RESETSTAT)'),
  p50Usec: z.number().nullable(),
  p99Usec: z.number().nullable(),
  p999Usec: z.number().nullable(),
})

const NodeFiguresSchema = z.object({
  opsPerSecond: perSecond('Commands processed per second (total_commands_processed)'),
  cpuRatio: perSecond('CPU seconds (used_cpu_sys + used_cpu_user) per second: 1 is one core busy'),
  usedMemoryBytes: z.number().min(0),
  maxmemoryBytes: z.number().min(0).describe('0: no limit'),
  connectedClients: z.int().min(0),
  blockedClients: z.int().min(0),
  keyspaceHitsPerSecond: perSecond('Keyspace hits per second'),
  keyspaceMissesPerSecond: perSecond('Keyspace misses per second'),
  networkInBytesPerSecond: perSecond('Bytes received per second'),
  networkOutBytesPerSecond: perSecond('Bytes sent per second'),
  evictedKeys: z.number().min(0).describe('Keys evicted since the node started'),
  evictedKeysPerSecond: perSecond('Keys evicted per second'),
  latency: z
    .array(CommandLatencySchema)
    .describe('The busiest commands with their latency percentiles in µs (INFO latencystats, Redis 7)'),
  replicationLagSeconds: z
    .number()
    .min(0)
    .nullable()
    .describe('Replicas: seconds since the replica last acknowledged its master; null on a master'),
  replicationBehindBytes: z
    .number()
    .min(0)
    .nullable()
    .describe("Replicas: bytes of the master's replication stream not yet acknowledged"),
})

const NodeHotKeySchema = z.object({
  key: z.string(),
  state: z.enum(['registered', 'warming']),
  mitigation: Mitigation.nullable(),
  requestsPerSecond: z
    .number()
    .nullable()
    .describe('Cluster-wide, as the agents count them (L1 hits included)'),
  redisOpsPerSecond: z
    .number()
    .nullable()
    .describe('Of those, the ones reaching this node (L1 misses of a local_cache key); null for a split key'),
  shareOfNodeOps: z.number().min(0).max(1).nullable().describe("redisOpsPerSecond over the node's ops/s"),
  nodeOpsBefore: z
    .number()
    .nullable()
    .describe(
      "The node's highest ops/s from 10 s before the promotion to the first sample after it (null: promoted before " +
        'sampling began); a key mitigated within one sample interval shows only part of its load here',
    ),
  nodeOpsAfter: z.number().nullable().describe("The node's ops/s now, while the key is mitigated"),
})

const NodeStatusShape = {
  node: z.string().describe('host:port'),
  role: z.enum(['master', 'replica']),
  master: z.string().nullable().describe('The master a replica follows'),
  up: z.boolean().describe('Whether the latest INFO answered'),
  error: z.string().nullable().describe('Why the latest INFO failed'),
  sampledAt: z.int().nullable().describe('When the node last answered, epoch ms'),
  figures: NodeFiguresSchema.nullable().describe(
    'The latest figures (the last known while the node is down)',
  ),
  hotKeys: z.array(NodeHotKeySchema).describe('Registered and warming keys this node owns, busiest first'),
}

/** Body of GET /nodes. */
export const NodesViewSchema = z.object({
  topology: z.enum(['standalone', 'sentinel', 'cluster']).nullable(),
  sampledAt: z.int().nullable().describe('When the latest sample was taken; null while none is kept'),
  intervalMs: z.int().min(0).describe('How often the nodes are sampled; 0: sampling is off'),
  imbalance: z.number().nullable().describe("The busiest master's ops/s over the masters' mean"),
  nodes: z.array(z.object(NodeStatusShape)),
})

/** Body of GET /nodes/{node}. */
export const NodeDetailSchema = z.object({
  ...NodeStatusShape,
  history: z
    .array(z.object({ at: z.int(), opsPerSecond: z.number().nullable(), cpuRatio: z.number().nullable() }))
    .describe('The last 300 samples (five minutes at the default interval), oldest first'),
})

/** Path of GET /nodes/{node}. */
export const NodeParams = z.object({
  node: z
    .string()
    // The port after the last colon: an IPv6 host has colons of its own.
    .regex(/^\S+:\d{1,5}$/, 'must be host:port, percent-encoded (for example 10.0.0.5%3A6379)')
    .describe('The node as GET /nodes names it, host:port, percent-encoded'),
})
