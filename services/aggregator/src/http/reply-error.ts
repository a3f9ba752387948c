import { STATUS_CODES } from 'node:http'
import type { FastifyReply } from 'fastify'

/** Sends Fastify's error shape `{statusCode, code?, error, message}` with `statusCode`. */
export function replyError(
  reply: FastifyReply,
  statusCode: number,
  message: string,
  code?: string,
): FastifyReply {
  const body = {
    statusCode,
    ...(code === undefined ? {} : { code }),
    error: STATUS_CODES[statusCode] ?? 'Error',
    message,
  }
  return reply.code(statusCode).send(body)
}
