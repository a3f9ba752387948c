export { ensureDebianPackage } from './debian-package.js'
export { DevServicesError, type ServiceName, ServiceStartError, ServiceUnavailableError } from './errors.js'
export { onProcessExit } from './exit-cleanup.js'
export { freePort, isPortFree } from './free-port.js'
export {
  defaultPostgresBinDirs,
  findPostgresBinaries,
  type PostgresBinaries,
} from './postgres-binaries.js'
export { DEFAULT_DATABASE_URL, type EnsurePostgresOptions, ensurePostgres } from './postgres-server.js'
export { type PostgresRunner, postgresRunner } from './postgres-user.js'
export { redactUrl } from './redact-url.js'
export {
  type ClusterNode,
  type ClusterServer,
  type RedisCluster,
  type RedisClusterOptions,
  startRedisCluster,
} from './redis-cluster.js'
export { pingRedis } from './redis-ping.js'
export {
  type RedisProcessOptions,
  type StartedRedisProcess,
  startRedisProcess,
} from './redis-process.js'
export {
  type RedisSentinel,
  type RedisSentinelOptions,
  type SentinelDataServer,
  startRedisSentinel,
} from './redis-sentinel.js'
export { DEFAULT_REDIS_URL, type EnsureRedisOptions, ensureRedis } from './redis-server.js'
export type { EnsureServiceOptions, RunningService, ServiceLog } from './running-service.js'
export { ServerProcess } from './server-process.js'
export { type WaitUntilOptions, waitUntil } from './wait-until.js'
