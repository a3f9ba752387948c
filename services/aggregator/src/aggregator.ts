import { createNames, type HeatsinkNames } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import { type Logger, pino } from 'pino'
import { type Clock, systemClock } from './clock.js'
import { type Component, Components, together } from './component.js'
import { type Config, warnUnsafeSettings } from './config.js'
import type { Database } from './db/database.js'
import { MIGRATIONS_DIR, migrate } from './db/migrate.js'
import { createPgDatabase, type PgDatabaseOptions } from './db/pg-database.js'
import { createPgliteDatabase } from './db/pglite-database.js'
import { DetectionEngine, detectionMetrics } from './detection/detection-engine.js'
import { type ApiServer, buildApi } from './http/app.js'
import { LiveFeed } from './live/live-feed.js'
import { LiveStateReader } from './live/live-state-reader.js'
import { createMetrics, type Metrics } from './metrics.js'
import { createNodeView } from './nodes/node-view.js'
import { replicaProbes } from './readiness.js'
import { createControlRedis, quitRedis, refuseUnflaggedCluster } from './redis-connection.js'
import { EventLog } from './registry/event-log.js'
import { RegistryPublisher } from './registry/registry-publisher.js'
import { RegistryService } from './registry/registry-service.js'
import { registerClusterGauges } from './reporting/cluster-gauges.js'
import { ReporterLease } from './reporting/reporter-lease.js'
import { connectionOwner, unknownOwner } from './storms/key-owner.js'
import { MissStormLog } from './storms/miss-storm-log.js'
import { Ticker } from './ticker.js'
import type { TrafficReader } from './traffic-reader.js'

/** Options of createAggregator; everything has a default. */
export interface AggregatorOptions {
  /** Default: silent. */
  readonly log?: Logger
  /** Live traffic for the API; default: what the detection engine reads from Redis. */
  readonly trafficReader?: TrafficReader
  readonly clock?: Clock
  /** Default: MIGRATIONS_DIR, the migrations shipped inside this package. */
  readonly migrationsDir?: string
  /** Pool tuning when DATABASE_URL is set. */
  readonly database?: Omit<PgDatabaseOptions, 'log'>
  /**
   * A registry database to use instead of one built from the configuration; its owner closes it. Replicas in one
   * process share an embedded PGlite this way, since PGlite serves a single process.
   */
  readonly db?: Database
  /** How often the outbox is published besides after each change. Default 1000 ms. */
  readonly publishIntervalMs?: number
  /** How often expired manual promotions are demoted. Default 1000 ms. */
  readonly expiryIntervalMs?: number
  /** How long the metrics reporter lease lasts (renewed every third of it). Default 15000 ms. */
  readonly metricsReporterLeaseMs?: number
}

/** One aggregator replica: its parts, and start/stop for the whole. */
export interface Aggregator {
  readonly config: Config
  readonly app: ApiServer
  readonly db: Database
  /**
   * The command connection (a Cluster client with HEATSINK_REDIS_CLUSTER); take duplicate() for blocking reads or
   * subscriptions.
   */
  readonly redis: Redis | Cluster
  readonly names: HeatsinkNames
  readonly registry: RegistryService
  readonly publisher: RegistryPublisher
  /** Reads the reports, sums them cluster-wide, promotes and demotes. */
  readonly detection: DetectionEngine
  readonly metrics: Metrics
  readonly log: Logger
  /**
   * Adds a component (an ingest loop) started after detection and before the HTTP listener, and stopped together
   * with them; only before start().
   */
  addComponent(component: Component): void
  /** Connects Redis, applies migrations, starts publishing and expiry, the added components, then listens. */
  start(): Promise<void>
  /**
   * Stops ingest and HTTP together (idle connections closed at once, requests in progress answered within 3/4 of
   * shutdownTimeoutMs), then the rest in reverse, Redis and the database last. Idempotent.
   */
  stop(): Promise<void>
  /** `http://host:port` once listening. */
  url(): string | undefined
}

/** Builds one aggregator replica from its configuration; nothing connects until start(). */
export function createAggregator(config: Config, options: AggregatorOptions = {}): Aggregator {
  const log = options.log ?? pino({ level: 'silent' })
  const clock = options.clock ?? systemClock
  const migrationsDir = options.migrationsDir ?? MIGRATIONS_DIR
  const names = createNames(config.namespace)
  const metrics = createMetrics({ reportStreams: names.reportStreams })
  const db =
    options.db ??
    (config.databaseUrl === null
      ? createPgliteDatabase(config.dataDir)
      : createPgDatabase(config.databaseUrl, { ...options.database, log }))
  const redis = createControlRedis(config, {
    lazyConnect: true,
    // Fail a command after a couple of reconnect attempts rather than hold an API request for a long outage.
    maxRetriesPerRequest: 2,
    connectionName: `heatsink-aggregator:${config.replicaId}`,
  })

  const publisher = new RegistryPublisher(db, {
    redis,
    names,
    clock,
    log,
    metrics,
    intervalMs: options.publishIntervalMs ?? 1000,
    registryKey: config.registryKey,
  })
  const registry = new RegistryService(db, { clock, log, metrics, afterCommit: () => publisher.flush() })
  const expiry = new Ticker(
    'registry expiry',
    options.expiryIntervalMs ?? 1000,
    () => registry.expireDue(clock.now()),
    log,
  )
  const probes = replicaProbes({ redis, db, migrationsDir, ingest: () => detection.checkIngest() })
  const missStorms = new MissStormLog(redis, names.missStormsKey, log)
  const detection = new DetectionEngine({
    redis,
    names,
    registry,
    settings: {
      windowMs: config.windowMs,
      hotRps: config.hotRps,
      coolRps: config.coolRps,
      coolSeconds: config.coolSeconds,
      counterShards: config.counterShards,
      policy: config.policy,
      maxReportAgeMs: config.maxReportAgeMs,
      maxClockSkewMs: config.maxClockSkewMs,
      ingestStallMs: config.ingestStallMs,
      missStorm: config.missStorm,
      contention: config.contention,
    },
    replicaId: config.replicaId,
    now: () => clock.now(),
    registryKey: config.registryKey,
    missStorms: { log: missStorms, owner: config.sharesDataRedis ? connectionOwner(redis) : unknownOwner },
    log,
    metrics: detectionMetrics(metrics),
  })
  const reporterLease = new ReporterLease({
    redis,
    leaseKey: names.metricsReporterLeaseKey,
    replicaId: config.replicaId,
    ...(options.metricsReporterLeaseMs === undefined ? {} : { ttlMs: options.metricsReporterLeaseMs }),
    log,
  })
  registerClusterGauges(metrics.registry, {
    lease: reporterLease,
    registry,
    redis,
    reportStreams: names.reportStreams,
    consumerGroup: names.consumerGroup,
    agents: detection.agents,
    log,
  })
  const traffic: TrafficReader = options.trafficReader ?? detection.traffic
  const nodeView = createNodeView({
    config,
    names,
    redis,
    lease: reporterLease,
    registry,
    traffic: detection.traffic,
    counters: detection.counters,
    metrics: metrics.registry,
    now: () => clock.now(),
    log,
  })
  const events = new EventLog(db)
  const feed = new LiveFeed({
    reader: new LiveStateReader({
      registry,
      events,
      missStorms,
      agents: detection.agents,
      traffic,
      keyStats: detection.keyStats,
      counters: detection.counters,
      now: () => clock.now(),
      hotRps: config.hotRps,
      coolRps: config.coolRps,
      windowMs: config.windowMs,
      writesNeedToken: config.apiToken !== null,
    }),
    windowMs: config.windowMs,
    latestCompleteWindow: () => detection.traffic.latestCompleteWindow(),
    log,
  })
  const app = buildApi({
    registry,
    traffic,
    metrics,
    probes,
    apiToken: config.apiToken,
    log,
    // Requests in progress get three quarters of the shutdown deadline; the rest is for closing Redis and the
    // database after them, so a stop that cuts a slow client off still ends cleanly and in time.
    closeTimeoutMs: Math.floor(config.shutdownTimeoutMs * 0.75),
    operators: {
      feed,
      agents: detection.agents,
      events,
      missStorms,
      keyStats: detection.keyStats,
      nodes: nodeView.routes,
    },
    contention: detection.contention,
  })

  const added: Component[] = []
  const components = new Components(log)
  let url: string | undefined
  let started = false

  const core: Component[] = [
    {
      name: 'redis',
      start: async () => {
        await redis.connect()
        await refuseUnflaggedCluster(redis, config)
      },
      stop: () => quitRedis(redis),
    },
    {
      name: 'database',
      start: async () => void (await migrate(db, { dir: migrationsDir, log })),
      stop: async () => {
        if (options.db === undefined) await db.close()
      },
    },
    { name: 'registry publisher', start: () => publisher.start(), stop: () => publisher.stop() },
    { name: 'registry expiry', start: async () => expiry.start(), stop: () => expiry.stop() },
    { name: 'metrics reporter lease', start: () => reporterLease.start(), stop: () => reporterLease.stop() },
    ...(nodeView.component === undefined ? [] : [nodeView.component]),
  ]
  const ingest: Component = {
    name: 'detection',
    start: () => detection.start(),
    stop: () => detection.stop(),
  }
  const http: Component = {
    name: 'http',
    start: async () => {
      warnUnsafeSettings(config, log)
      url = await app.listen({ port: config.port, host: config.host })
    },
    stop: async () => {
      await app.close()
      feed.close()
    },
  }

  return {
    config,
    app,
    db,
    redis,
    names,
    registry,
    publisher,
    detection,
    metrics,
    log,
    addComponent: (component) => {
      if (started) throw new Error(`cannot add component ${component.name} after start()`)
      added.push(component)
    },
    start: async () => {
      if (started) throw new Error('start() may be called once')
      started = true
      for (const component of core) components.add(component)
      // Ingest and HTTP take work in: started in this order, they are stopped together, before what they use.
      components.add(together('ingest and http', [ingest, ...added, http]))
      log.info({ replicaId: config.replicaId, database: db.kind, namespace: names.namespace }, 'starting')
      await components.start()
      log.info({ url }, 'started')
    },
    stop: async () => {
      await components.stop()
      url = undefined
    },
    url: () => url,
  }
}
