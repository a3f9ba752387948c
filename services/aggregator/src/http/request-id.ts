import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'

/** The header a request id is taken from and returned in. */
export const REQUEST_ID_HEADER = 'x-request-id'

// What a caller's id may be: 1 to 128 printable ASCII characters without spaces. Anything else (a multi-kilobyte
// value, control characters, a line break that would forge a log line in a text sink) is replaced, not trusted.
const ACCEPTED_ID = /^[\x21-\x7e]{1,128}$/

/**
 * The id of a request: the caller's `x-request-id` when it is acceptable (so a gateway's or client's id follows
 * the request into these logs), otherwise a random UUID, unique across replicas and restarts without coordination.
 */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER]
  return typeof given === 'string' && ACCEPTED_ID.test(given) ? given : randomUUID()
}

/** Returns every request's id in its response's `x-request-id`, so a caller can quote it when reporting a problem. */
export function echoRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header(REQUEST_ID_HEADER, request.id)
  })
}
