export {
  type Codec,
  InvalidStampedeOptionError,
  jsonCodec,
  type LoadContext,
  LoadTimeoutError,
  StampedeError,
  unwrapStored,
} from '@heatsink/stampede'
export { Agent } from './agent.js'
export { DATABASE_CHECK_MS } from './channels/database-marker.js'
export { TRACKING_CHANNEL } from './channels/tracking.js'
// The Sentinel client the agent's own control connections use; the proxy's backend uses it too.
export { FollowingRedis } from './connections/following-redis.js'
export { createAgent } from './create-agent.js'
// For transports of the data-plane core other than the ioredis front door (services/proxy).
export { ConnectionState, FALL_THROUGH, type Route, type ServedRoute } from './data-plane/route.js'
export {
  AgentClosedError,
  AgentError,
  AgentNotReadyError,
  InvalidAgentOptionError,
  UnknownAgentOptionError,
} from './errors.js'
export {
  AGENT_CHANNELS,
  type DemotedEvent,
  type InvalidatedEvent,
  type L1DroppedEvent,
  type LoadFailedEvent,
  type PromotedEvent,
  type ReportDroppedEvent,
} from './events/channels.js'
export type { AgentStats, InvalidationSource, StampedeTotals } from './events/stats.js'
export type { Loader, LoadOptions } from './get-or-load/loader.js'
export { Cluster, type HeatsinkClusterOptions } from './ioredis/cluster.js'
export type { HeatsinkHandle } from './ioredis/heatsink-handle.js'
export type { HeatsinkOptions } from './ioredis/process-agents.js'
export { type HeatsinkRedisOptions, Redis } from './ioredis/redis.js'
export type { AgentLogger, AgentOptions, L1Options, StampedeOptions } from './options/agent-options.js'
export {
  DEFAULT_L1_ENTRIES,
  DEFAULT_MAX_TTL_MS,
  DEFAULT_TTL_FRACTION,
  L1_MAX_ENTRIES,
  L1_MIN_ENTRIES,
} from './options/resolve-options.js'
export { REPORT_STREAM_MAXLEN, REPORT_STREAM_TTL_MS } from './reporting/reporter.js'
export { ReportingTuning, type ReportingTuningOptions } from './reporting/reporting-tuning.js'
