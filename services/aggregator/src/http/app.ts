import type { IncomingMessage, ServerResponse } from 'node:http'
import fastifySwagger from '@fastify/swagger'
import fastifySwaggerUi from '@fastify/swagger-ui'
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type RawServerDefault,
} from 'fastify'
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod'
import type { Logger } from 'pino'
import type { AgentDirectory } from '../agents/agent-directory.js'
import type { KeyContention } from '../contention/write-contention.js'
import { InvalidRegistryInputError, KeyHashCollisionError, RegistryUnavailableError } from '../errors.js'
import type { LiveFeed } from '../live/live-feed.js'
import type { Metrics } from '../metrics.js'
import type { EventLog } from '../registry/event-log.js'
import type { RegistryService } from '../registry/registry-service.js'
import type { MissStormLog } from '../storms/miss-storm-log.js'
import type { KeyStatsStore } from '../traffic/key-stats-store.js'
import type { TrafficReader } from '../traffic-reader.js'
import { drainOnClose } from './connection-drain.js'
import { dashboardAssets, dashboardDir } from './dashboard-assets.js'
import { hotkeyRoutes } from './hotkey-routes.js'
import { insightRoutes } from './insight-routes.js'
import { liveRoute } from './live-route.js'
import { type NodeRoutesOptions, nodeRoutes } from './node-routes.js'
import { openApiOptions } from './openapi.js'
import { opsRoutes, type ReadinessProbe } from './ops-routes.js'
import { replyError } from './reply-error.js'
import { echoRequestId, requestIdOf } from './request-id.js'
import { RequestLogController } from './request-logging.js'
import { observeRequestDurations } from './request-metrics.js'

/** What the REST API is built from. */
export interface ApiOptions {
  readonly registry: RegistryService
  readonly traffic: TrafficReader
  /** Served at /metrics; the API's request durations are observed into it. */
  readonly metrics: Pick<Metrics, 'registry' | 'httpRequestDuration'>
  readonly probes: readonly ReadinessProbe[]
  /** How long a readiness probe may take before it counts as failed. Default 2000 ms. */
  readonly probeTimeoutMs?: number
  /** When set, POST and DELETE need `Authorization: Bearer <token>`. */
  readonly apiToken: string | null
  readonly log?: Logger
  /**
   * How long close() lets requests in progress finish before it closes their connections; idle connections are
   * closed at once. Default 5000 ms.
   */
  readonly closeTimeoutMs?: number
  /** The operators' views: the dashboard at `/`, GET /live, /agents, /events and /hotkeys/{key}/agents. */
  readonly operators?: OperatorViews
  /** Write contention per key, for GET /hotkeys/{key}/stats; without it the stats say none. */
  readonly contention?: { of(key: string): Promise<KeyContention> }
}

/** What the dashboard and the operators' read routes are served from. */
export interface OperatorViews {
  readonly feed: LiveFeed
  readonly agents: AgentDirectory
  readonly events: EventLog
  /** The miss storms raised, listed with the events; without it GET /events lists none. */
  readonly missStorms?: MissStormLog
  readonly keyStats: KeyStatsStore
  /** GET /nodes and /nodes/{node}: the Redis nodes' load, as the metrics reporter samples it. */
  readonly nodes?: NodeRoutesOptions
  /** The built dashboard's directory; default: found next to @heatsink/dashboard's package.json. */
  readonly dashboardDir?: string | null
}

// A key may be 1024 bytes of UTF-8, up to 3 characters each once percent-encoded; a longer parameter must reach
// validation (a 400 naming `key`) instead of failing to match any route.
const MAX_PARAM_LENGTH = 16 * 1024

/** The API's Fastify instance. */
export type ApiServer = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  ZodTypeProvider
>

/** The Fastify app serving the REST API, its OpenAPI document (/docs/json), docs page (/docs) and the dashboard (/). */
export function buildApi(options: ApiOptions): ApiServer {
  const app = Fastify({
    ...(options.log === undefined ? {} : { loggerInstance: options.log as FastifyBaseLogger }),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // The caller's x-request-id, or a UUID: every log line of the request carries it as `reqId`.
    genReqId: requestIdOf,
    logController: new RequestLogController(),
    // Messages read "<where>/<field> <problem>": `body/splitFactor must be a power of two from 1 to 1024`.
    schemaErrorFormatter: (errors, dataVar) =>
      new Error(
        errors
          .map(
            (error) => `${dataVar}${error.instancePath === '/' ? '' : error.instancePath} ${error.message}`,
          )
          .join('; '),
      ),
  }).withTypeProvider<ZodTypeProvider>()
  // Fastify's own forceCloseConnections ('idle', its default) leaves connections that have not asked anything yet.
  drainOnClose(app, options.closeTimeoutMs ?? 5000)
  echoRequestId(app)
  observeRequestDurations(app, options.metrics.httpRequestDuration)
  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof RegistryUnavailableError) {
      request.log.warn({ err: error }, 'registry unavailable')
      return replyError(reply, 503, `${error.message}; nothing was changed, retry later`, error.code)
    }
    if (error instanceof InvalidRegistryInputError) return replyError(reply, 400, error.message, error.code)
    if (error instanceof KeyHashCollisionError) return replyError(reply, 409, error.message, error.code)
    if (error.validation !== undefined) return replyError(reply, 400, error.message, 'FST_ERR_VALIDATION')
    const status = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500
    if (status < 500) return replyError(reply, status, error.message, error.code)
    request.log.error({ err: error }, 'request failed')
    return replyError(reply, status, 'internal server error')
  })

  app.register(fastifySwagger, openApiOptions)
  app.register(fastifySwaggerUi, { routePrefix: '/docs' })
  app.register(hotkeyRoutes, {
    registry: options.registry,
    traffic: options.traffic,
    apiToken: options.apiToken,
    ...(options.contention === undefined ? {} : { contention: options.contention }),
  })
  if (options.operators !== undefined) {
    const { feed, agents, events, missStorms, keyStats } = options.operators
    app.register(insightRoutes, {
      agents,
      events,
      keyStats,
      ...(missStorms === undefined ? {} : { missStorms }),
    })
    app.register(liveRoute, { feed })
    if (options.operators.nodes !== undefined) app.register(nodeRoutes, options.operators.nodes)
    app.register(dashboardAssets, { dir: options.operators.dashboardDir ?? dashboardDir() })
  }
  app.register(opsRoutes, {
    probes: options.probes,
    metrics: options.metrics.registry,
    ...(options.probeTimeoutMs === undefined ? {} : { probeTimeoutMs: options.probeTimeoutMs }),
  })
  return app
}
