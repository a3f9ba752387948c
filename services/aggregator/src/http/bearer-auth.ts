import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { replyError } from './reply-error.js'

const BEARER = /^Bearer +(\S+) *$/i

/**
 * An onRequest hook that answers 401 unless the request carries `Authorization: Bearer <token>`. Both sides are
 * hashed before the constant-time comparison, so neither the token's content nor its length leaks through timing.
 */
export function bearerAuth(token: string) {
  const expected = digest(token)
  // Returning the reply tells Fastify the hook answered; returning nothing lets the request through.
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> => {
    const given = BEARER.exec(request.headers.authorization ?? '')?.[1]
    if (given !== undefined && timingSafeEqual(digest(given), expected)) return undefined
    reply.header('www-authenticate', 'Bearer realm="heatsink"')
    return replyError(reply, 401, 'this endpoint needs the header Authorization: Bearer <HEATSINK_API_TOKEN>')
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest()
}
