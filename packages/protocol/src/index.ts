export { CLUSTER_SLOTS, redisClusterSlot } from './cluster-slot.js'
export {
  type DecodeResult,
  decodeInvalidation,
  decodeRegistryEvent,
  decodeReport,
  decodeSnapshot,
  encodeInvalidation,
  encodeRegistryEvent,
  encodeReport,
  encodeSnapshot,
  encodeTuning,
  STREAM_FIELD,
  safeDecodeInvalidation,
  safeDecodeRegistryEvent,
  safeDecodeReport,
  safeDecodeSnapshot,
  safeDecodeTuning,
} from './codec.js'
export { DetectionTuning, MAX_WATCHED_KEYS } from './detection-tuning.js'
export {
  environmentProblems,
  envLogLevel,
  envMatching,
  envNamespace,
  envNumber,
  envPort,
  envPositiveInteger,
  envRedisUrl,
  envRegistryKey,
  envText,
  LOG_LEVELS,
} from './environment.js'
export {
  InvalidNamespaceError,
  InvalidRedisUrlError,
  MalformedMessageError,
  ProtocolError,
  WireVersionMismatchError,
} from './errors.js'
export { AgentId, EpochMs, MAX_AGENT_ID_LENGTH, MAX_KEY_BYTES, RedisKey } from './fields.js'
export { Invalidation, MAX_INVALIDATION_KEYS } from './invalidation.js'
export { KEY_HASH_LENGTH, KeyHash, keyHash } from './key-hash.js'
export type {
  AgentStatus,
  KeyStatsBody,
  LiveFrame,
  LiveHotKey,
  LiveState,
  RatePoint,
  RegistryChange,
} from './live-view.js'
export type { MissStorm, MissStormAction } from './miss-storm.js'
export { MAX_SPLIT_FACTOR, Mitigation, SplitFactor } from './mitigation.js'
export {
  createNames,
  DEFAULT_NAMESPACE,
  DEFAULT_REPORT_SHARDS,
  HEATSINK_NAME_PARTS,
  type HeatsinkNames,
  MAX_REPORT_SHARDS,
} from './names.js'
export type {
  CommandLatency,
  NodeDetail,
  NodeFigures,
  NodeHistoryPoint,
  NodeHotKey,
  NodeStatus,
  NodesView,
} from './node-view.js'
export { redactUrl } from './redact-url.js'
export {
  type InfoReplica,
  parseInfo,
  parseInfoPairs,
  parseInfoReplicaLines,
} from './redis-info.js'
export {
  isSentinelUrl,
  parseSentinelUrl,
  redisUrlProblem,
  type SentinelUrlEnvironment,
  type SentinelUrlOptions,
} from './redis-url.js'
export {
  DemoteEvent,
  PromoteEvent,
  RegistryEntry,
  type RegistryEntryInput,
  RegistryEvent,
  type RegistryEventInput,
  RegistrySource,
  UpdateEvent,
} from './registry.js'
export {
  canonicalJson,
  MIN_REGISTRY_KEY_LENGTH,
  registryKeyProblem,
  signRegistryMessage,
  verifyRegistryMessage,
} from './registry-mac.js'
export {
  CandidateEntry,
  type CompactCandidate,
  compactCandidate,
  HotKeyStats,
  MAX_CANDIDATES,
  MAX_HOT_KEY_STATS,
  MAX_SKETCH_SAMPLES,
  SketchError,
  WindowReport,
  type WindowReportInput,
} from './report.js'
export { sameSlotTag, slotTag } from './slot-tag.js'
export { RegistrySnapshot, type RegistrySnapshotInput } from './snapshot.js'
export { keepSocketErrorsHandled } from './socket-errors.js'
export { WIRE_VERSION } from './version.js'
export { MAX_WATCH_ABORT_KEYS, readWatchAborts, WatchAborts } from './watch-aborts.js'
