import { type FastifyReply, type FastifyRequest, LogController } from 'fastify'

/** Route `config` of routes whose requests are logged at debug instead of info. */
export interface QuietRouteConfig {
  readonly quietLogs?: boolean
}

/** The `config` that makes a route's request lines debug: probes and scrapes, asked every few seconds. */
export const QUIET_ROUTE: QuietRouteConfig = { quietLogs: true }

/**
 * Fastify's request lines ("incoming request", "request completed"), at debug for routes marked QUIET_ROUTE:
 * Kubernetes probes and Prometheus scrapes would otherwise be most of an info log and hide the API calls.
 * A quiet request that fails is still logged at error level, as Fastify does.
 */
export class RequestLogController extends LogController {
  override incomingRequest(request: FastifyRequest, reply: FastifyReply): void {
    if (!isQuiet(request)) super.incomingRequest(request, reply)
    else if (!this.isLogDisabled(request)) request.log.debug({ req: request }, 'incoming request')
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error || !isQuiet(request)) super.requestCompleted(error, request, reply)
    else if (!this.isLogDisabled(request)) {
      reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed')
    }
  }
}

function isQuiet(request: FastifyRequest): boolean {
  return (request.routeOptions.config as QuietRouteConfig | undefined)?.quietLogs === true
}
