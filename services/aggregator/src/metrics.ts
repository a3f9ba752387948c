import { readFileSync } from 'node:fs'
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'

/** The aggregator's package version, read once: src/ and dist/ both sit next to package.json. */
export const AGGREGATOR_VERSION: string = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
).version

// Every reason a report is dead-lettered (see docs/operations.md): counted from 0, so a rate() of any of them
// is defined before the first one happens.
const DEAD_LETTER_REASONS = [
  'E_MALFORMED_MESSAGE',
  'E_WIRE_VERSION',
  'E_MISSING_FIELD',
  'E_WINDOW_MISMATCH',
  'E_FROM_THE_FUTURE',
] as const
const REGISTRY_EVENT_TYPES = ['promote', 'update', 'demote'] as const

/** What createMetrics knows in advance, to start each labelled counter's series at 0. */
export interface MetricsOptions {
  /** The report streams read (HeatsinkNames.reportStreams). */
  readonly reportStreams?: readonly string[]
}

/** Every metric one aggregator instance exports, on its own prom-client Registry. */
export interface Metrics {
  /** Served at GET /metrics. */
  readonly registry: Registry
  /** Reports read from the report streams. */
  readonly ingestReports: Counter
  /** Candidate entries (one key's count in one agent's report) processed. */
  readonly ingestEntries: Counter
  /** Reports claimed from a replica that stopped acknowledging them. */
  readonly ingestClaimed: Counter
  /** Reports skipped because their window ended too long ago to act on. */
  readonly ingestStale: Counter
  /** Report stream consumer groups this replica recreated after they went missing, by stream. */
  readonly ingestGroupRecreated: Counter<'stream'>
  /** Stream entries set aside as undecodable or refused, by reason. */
  readonly deadLetters: Counter<'reason'>
  /** API request durations, by method, route pattern and status code. */
  readonly httpRequestDuration: Histogram<'method' | 'route' | 'status_code'>
  /** From the reports first showing a key hot to its promote event being published. */
  readonly detectionLatency: Histogram
  /** Registry events this replica published on the registry channel, by type. */
  readonly registryEventsPublished: Counter<'type'>
  /** Registry writes that failed (Postgres down, or a rejected statement). */
  readonly registryWriteFailures: Counter
  /** Automatic promotions the detector gave up on (see Detector): each is a hot key left unmitigated. */
  readonly promotionsAbandoned: Counter
  /** Snapshot hashes replaced because no replica wrote them (see RegistryPublisher). */
  readonly registrySnapshotRepaired: Counter
  /** Keys agents sampled to measure the sketch's error, and those overcounted beyond the sketch's bound. */
  readonly sketchSampledKeys: Counter
  readonly sketchOverBound: Counter
  /** Mean and largest relative overcount of the sampled keys in the newest window reported. */
  readonly sketchMeanRelativeError: Gauge
  readonly sketchMaxRelativeError: Gauge
  /** From a report's window end to its ingestion. */
  readonly reportLag: Histogram
  /** Miss storms this replica raised (see MissStormWatch); summed over replicas, each storm counts once. */
  readonly missStorms: Counter
  /** Optional report fields set aside as malformed (the rest of the report applied), by field. */
  readonly reportFieldsSetAside: Counter<'field'>
}

/**
 * A fresh Registry with the default process metrics and every Heatsink metric of this replica (the cluster-wide
 * gauges are registered by registerClusterGauges). Not prom-client's global registry, so several aggregators
 * (tests, replicas in one process) each count on their own.
 */
export function createMetrics(options: MetricsOptions = {}): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const registers = [registry]
  new Gauge({
    name: 'heatsink_build_info',
    help: 'Always 1; the labels say which release and Node.js version this replica runs',
    labelNames: ['version', 'node_version'],
    registers,
  }).set({ version: AGGREGATOR_VERSION, node_version: process.version }, 1)
  const metrics: Metrics = {
    registry,
    httpRequestDuration: new Histogram({
      name: 'heatsink_http_request_duration_seconds',
      help: 'API requests from arrival to the last byte of the answer, by route pattern (not the raw URL) and status',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    ingestReports: new Counter({
      name: 'heatsink_ingest_reports_total',
      help: 'Window reports read from the report streams',
      registers,
    }),
    ingestEntries: new Counter({
      name: 'heatsink_ingest_entries_total',
      help: "Candidate entries processed (one key's count in one agent's report)",
      registers,
    }),
    ingestClaimed: new Counter({
      name: 'heatsink_ingest_claimed_total',
      help: 'Reports claimed from a replica that stopped acknowledging them',
      registers,
    }),
    ingestStale: new Counter({
      name: 'heatsink_ingest_stale_reports_total',
      help: 'Reports skipped because their window ended longer ago than HEATSINK_MAX_REPORT_AGE_MS',
      registers,
    }),
    ingestGroupRecreated: new Counter({
      name: 'heatsink_ingest_group_recreated_total',
      help: 'Report stream consumer groups recreated after they went missing (Redis restarted without persistence, FLUSHALL, the stream deleted or expired)',
      labelNames: ['stream'],
      registers,
    }),
    deadLetters: new Counter({
      name: 'heatsink_dead_letter_total',
      help: 'Report stream entries set aside on the dead-letter stream',
      labelNames: ['reason'],
      registers,
    }),
    detectionLatency: new Histogram({
      name: 'heatsink_detection_latency_seconds',
      help: 'Time from the reports first showing a key hot to its promote event being published',
      buckets: [0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10],
      registers,
    }),
    registryEventsPublished: new Counter({
      name: 'heatsink_registry_events_published_total',
      help: 'Registry events published on the registry channel by this replica',
      labelNames: ['type'],
      registers,
    }),
    registryWriteFailures: new Counter({
      name: 'heatsink_registry_write_failures_total',
      help: 'Registry writes that failed',
      registers,
    }),
    promotionsAbandoned: new Counter({
      name: 'heatsink_promotions_abandoned_total',
      help: 'Automatic promotions given up after repeated failures that were not a Postgres outage',
      registers,
    }),
    registrySnapshotRepaired: new Counter({
      name: 'heatsink_registry_snapshot_repaired_total',
      help: 'Registry snapshot hashes replaced because their version was not an integer or was ahead of Postgres',
      registers,
    }),
    sketchSampledKeys: new Counter({
      name: 'heatsink_sketch_sampled_keys_total',
      help: 'Keys agents counted exactly beside the sketch to measure its error (one in 256, by fingerprint)',
      registers,
    }),
    sketchOverBound: new Counter({
      name: 'heatsink_sketch_over_bound_total',
      help: "Sampled keys the sketch overcounted by more than its bound, (e / width) x the window's requests",
      registers,
    }),
    sketchMeanRelativeError: new Gauge({
      name: 'heatsink_sketch_mean_relative_error',
      help: 'Mean (estimate - exact) / exact over the sampled keys of the newest window reported',
      registers,
    }),
    sketchMaxRelativeError: new Gauge({
      name: 'heatsink_sketch_max_relative_error',
      help: 'Largest (estimate - exact) / exact over the sampled keys of the newest window reported',
      registers,
    }),
    reportLag: new Histogram({
      name: 'heatsink_report_lag_seconds',
      help: "Time from a report's window end to its ingestion",
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
      registers,
    }),
    missStorms: new Counter({
      name: 'heatsink_miss_storms_total',
      help: "Miss storms raised: a key's misses per second past HEATSINK_MISS_STORM_MIN_RPS and HEATSINK_MISS_STORM_FACTOR times its baseline",
      registers,
    }),
    reportFieldsSetAside: new Counter({
      name: 'heatsink_report_fields_set_aside_total',
      help: 'Optional report fields set aside as malformed while the rest of the report was applied, by field',
      labelNames: ['field'],
      registers,
    }),
  }
  // prom-client prints a labelled series only once it has a value.
  for (const reason of DEAD_LETTER_REASONS) metrics.deadLetters.inc({ reason }, 0)
  for (const type of REGISTRY_EVENT_TYPES) metrics.registryEventsPublished.inc({ type }, 0)
  for (const stream of options.reportStreams ?? []) metrics.ingestGroupRecreated.inc({ stream }, 0)
  metrics.reportFieldsSetAside.inc({ field: 'watchAborts' }, 0)
  return metrics
}
