import type { FastifyInstance } from 'fastify'
import type { Histogram } from 'prom-client'

/** The `route` label of requests no route matched (404s): one value, whatever URLs scanners try. */
export const UNMATCHED_ROUTE = 'unmatched'

/**
 * Observes every answered request's duration, labelled by method, route pattern (`/hotkeys/:key`, never the raw
 * URL: one series per key would grow without bound) and status code. Streams that take the response over (GET
 * /live) are not observed: their duration is how long a browser stayed, not how fast the API answered.
 */
export function observeRequestDurations(
  app: FastifyInstance,
  duration: Histogram<'method' | 'route' | 'status_code'>,
): void {
  app.addHook('onResponse', async (request, reply) => {
    duration.observe(
      {
        method: request.method,
        route: request.routeOptions.url ?? UNMATCHED_ROUTE,
        status_code: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    )
  })
}
