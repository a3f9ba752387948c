export { AGGREGATOR_COMMAND, REPO_ROOT } from './entry-points.js'
export { TestServiceMissingError } from './errors.js'
export { type ChannelListener, listenToEveryChannel } from './every-channel.js'
export type { FixtureScope, UseFixtureOptions } from './fixture-hooks.js'
export { testNamespace, testSchemaName } from './namespace.js'
export { pacedReads } from './paced-reads.js'
export {
  type CreateTestPostgresOptions,
  createTestPostgres,
  type TestPostgres,
  useTestPostgres,
} from './postgres.js'
export { type CreateTestRedisOptions, createTestRedis, type TestRedis, useTestRedis } from './redis.js'
export { requireServiceUrl, type ServiceVariable } from './service-env.js'
export { type FuzzBatch, type FuzzCommand, fuzzBatches, seededRandom } from './split-fuzz.js'
