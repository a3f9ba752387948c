export { type Aggregator, type AggregatorOptions, createAggregator } from './aggregator.js'
export { type Clock, systemClock } from './clock.js'
export { type Component, Components } from './component.js'
export { type Config, LOOPBACK_HOST, loadConfig } from './config.js'
export { isConnectionError } from './db/connection-errors.js'
export type { Database, Queryable, QueryResult } from './db/database.js'
export {
  MIGRATIONS_DIR,
  MIGRATIONS_TABLE,
  type MigrateOptions,
  migrate,
  pendingMigrations,
} from './db/migrate.js'
export { createPgDatabase, type PgDatabaseOptions } from './db/pg-database.js'
export { createPgliteDatabase, IN_MEMORY } from './db/pglite-database.js'
export { DetectionEngine, type DetectionSettings } from './detection/detection-engine.js'
export { Detector } from './detection/detector.js'
export { DEFAULT_MITIGATION_POLICY } from './detection/mitigation-policy.js'
export { RecentForms } from './detection/recent-forms.js'
export { WindowCounters } from './detection/window-counters.js'
export {
  AggregatorError,
  ConfigError,
  InvalidRegistryInputError,
  KeyHashCollisionError,
  MigrationError,
  RegistryUnavailableError,
} from './errors.js'
export { type ApiOptions, type ApiServer, buildApi, type OperatorViews } from './http/app.js'
export { dashboardDir } from './http/dashboard-assets.js'
export type { ReadinessProbe } from './http/ops-routes.js'
export { type ReceivedReport, ReportConsumer } from './ingest/report-consumer.js'
export { ReportIngest } from './ingest/report-ingest.js'
export { createMetrics, type Metrics } from './metrics.js'
export type { PromoteInput } from './registry/registry-input.js'
export {
  type FlushResult,
  RegistryPublisher,
  type RegistryPublisherOptions,
} from './registry/registry-publisher.js'
export type { RegistryRecord, RegistryStatus } from './registry/registry-record.js'
export {
  type DemoteOptions,
  type PromoteResult,
  RegistryService,
  type RegistryServiceOptions,
} from './registry/registry-service.js'
export { type GroupBacklog, readGroupBacklog } from './reporting/stream-backlog.js'
export { connectionOwner, type KeyOwner } from './storms/key-owner.js'
export { MissStormLog, type RaisedStorm } from './storms/miss-storm-log.js'
export {
  DEFAULT_MISS_STORM,
  type MissStormSettings,
  MissStormWatch,
  missStormFloor,
} from './storms/miss-storm-watch.js'
export { Ticker } from './ticker.js'
export { KeyStatsStore, type StoredKeyStats } from './traffic/key-stats-store.js'
export { RedisTrafficReader } from './traffic/redis-traffic-reader.js'
export { type KeyStats, NO_TRAFFIC, type TrafficReader } from './traffic-reader.js'
