export {
  CACHEABLE_CALLS,
  CACHEABLE_KEYS,
  type CacheableCall,
  type KeyWriter,
  writeCacheableKeys,
} from './cacheable-calls.js'
export { DelayingForwarder } from './delaying-forwarder.js'
export { AGGREGATOR_COMMAND, REPO_ROOT } from './entry-points.js'
export { TestServiceMissingError } from './errors.js'
export { type ChannelListener, listenToEveryChannel } from './every-channel.js'
export type { FixtureScope, UseFixtureOptions } from './fixture-hooks.js'
export { listenOnLoopback } from './loopback-server.js'
export { testNamespace, testSchemaName } from './namespace.js'
export { pacedReads } from './paced-reads.js'
export {
  type CreateTestPostgresOptions,
  createTestPostgres,
  type TestPostgres,
  useTestPostgres,
} from './postgres.js'
export { usePrivateRedis } from './private-redis.js'
export { type CreateTestRedisOptions, createTestRedis, type TestRedis, useTestRedis } from './redis.js'
export { requireServiceUrl, type ServiceVariable } from './service-env.js'
export { COMMAND_LINES, type CommandLine, NOT_COMPARED, RANDOM_ORDER } from './split-command-lines.js'
export {
  type CommandTableResult,
  type CommandTableRun,
  compareCommandTable,
  MOST_UNSPREAD,
} from './split-command-table.js'
export { type Client as SplitTestClient, shardsOnCluster, stateOf } from './split-comparison.js'
export { type FuzzBatch, type FuzzCommand, fuzzBatches, seededRandom } from './split-fuzz.js'
export {
  type ClusterFuzzRun,
  compareFuzz,
  compareFuzzOnCluster,
  type FuzzResult,
  type FuzzRun,
  runBatch,
} from './split-fuzz-comparison.js'
