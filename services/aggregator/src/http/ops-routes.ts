import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { Registry } from 'prom-client'
import { z } from 'zod'
import { PUBLIC } from './openapi.js'
import { QUIET_ROUTE } from './request-logging.js'
import { Health, Readiness } from './schemas.js'

/** One dependency /readyz checks: resolves when it answers, rejects with the reason otherwise. */
export interface ReadinessProbe {
  readonly name: string
  check(): Promise<void>
}

/** What the operational routes need. */
export interface OpsRoutesOptions {
  readonly probes: readonly ReadinessProbe[]
  readonly metrics: Registry
  /** How long a probe may take before it counts as failed. Default 2000 ms. */
  readonly probeTimeoutMs?: number
}

const tags = ['operations']

/** GET /healthz, GET /readyz, GET /metrics. */
export const opsRoutes: FastifyPluginAsyncZod<OpsRoutesOptions> = async (app, options) => {
  const timeoutMs = options.probeTimeoutMs ?? 2_000

  app.get(
    '/healthz',
    {
      config: QUIET_ROUTE,
      schema: {
        tags,
        operationId: 'checkLiveness',
        summary: 'The process is alive',
        security: PUBLIC,
        response: { 200: Health },
      },
    },
    async () => ({ status: 'ok' as const }),
  )

  app.get(
    '/readyz',
    {
      config: QUIET_ROUTE,
      schema: {
        tags,
        operationId: 'checkReadiness',
        summary: 'Redis and Postgres answer, the migrations are applied, and report ingest makes progress',
        security: PUBLIC,
        response: {
          200: Readiness.describe('Every check passed'),
          503: Readiness.describe('A check failed; `checks` says which and why'),
        },
      },
    },
    async (_request, reply) => {
      const results = await Promise.all(options.probes.map((probe) => run(probe, timeoutMs)))
      const checks = Object.fromEntries(options.probes.map((probe, i) => [probe.name, results[i] ?? 'ok']))
      const ready = results.every((result) => result === 'ok')
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unready', checks })
    },
  )

  app.get(
    '/metrics',
    {
      config: QUIET_ROUTE,
      schema: {
        tags,
        operationId: 'scrapeMetrics',
        summary: 'Prometheus metrics',
        security: PUBLIC,
        response: {
          200: {
            description: 'Prometheus text exposition format 0.0.4 (see docs/operations.md for the metrics)',
            content: { [options.metrics.contentType]: { schema: z.string() } },
          },
        },
      },
    },
    async (_request, reply) => {
      const text = await options.metrics.metrics()
      return reply.type(options.metrics.contentType).send(text)
    },
  )
}

async function run(probe: ReadinessProbe, timeoutMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
  })
  try {
    await Promise.race([probe.check(), timeout])
    return 'ok'
  } catch (error) {
    return `failed: ${error instanceof Error ? error.message : String(error)}`
  } finally {
    clearTimeout(timer)
  }
}
