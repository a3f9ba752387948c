import type { OutgoingHttpHeaders, ServerResponse } from 'node:http'
import type { LiveFrame } from '@heatsink/protocol'
import type { FastifyPluginAsync } from 'fastify'
import { z } from 'zod'
import type { LiveFeed } from '../live/live-feed.js'
import { PUBLIC } from './openapi.js'

/** What GET /live needs. */
export interface LiveRouteOptions {
  readonly feed: LiveFeed
}

// Proxies close connections idle for a minute or so; a comment line every 15 s keeps the stream open through them.
const HEARTBEAT_MS = 15_000
// How long a browser waits before reconnecting after the stream ends.
const RETRY_MS = 2_000
// A client this far behind (a stalled tab, a dead network path the kernel has not noticed) is cut off rather than
// buffered for without bound; if it comes back it resumes from its last event like any reconnect.
const MAX_UNSENT_BYTES = 1024 * 1024

/**
 * GET /live: server-sent events, one `frame` per window (new rate points and the current state). Each message's
 * id is the window of its last point, so a browser's EventSource reconnecting sends it as Last-Event-ID and gets
 * only the points it missed. Streams are ended when the server closes, so they never hold up a shutdown.
 */
export const liveRoute: FastifyPluginAsync<LiveRouteOptions> = async (app, { feed }) => {
  const open = new Set<ServerResponse>()
  // Registered here and run before the server stops listening: the connection drain then finds these responses
  // finished and closes their sockets at once, instead of waiting for its deadline.
  app.addHook('preClose', (done) => {
    for (const response of open) response.end()
    done()
  })

  app.get(
    '/live',
    {
      schema: {
        tags: ['operators'],
        operationId: 'streamLiveFrames',
        summary: 'Live view for the dashboard: server-sent events, one `frame` per window',
        description:
          'Each message is `event: frame` with a JSON LiveFrame; its id is the window of its last point. A client ' +
          'reconnecting with Last-Event-ID (or `?after=`) gets only the points it missed.',
        security: PUBLIC,
        response: {
          200: {
            description: 'An endless stream of server-sent events',
            content: { 'text/event-stream': { schema: z.string() } },
          },
        },
      },
    },
    async (request, reply) => {
      const lastEventId = Number(
        request.headers['last-event-id'] ?? (request.query as { after?: string }).after,
      )
      reply.hijack()
      const response = reply.raw
      // The headers set on the reply before it was taken over (x-request-id) go out with the stream's.
      response.writeHead(200, {
        ...(reply.getHeaders() as OutgoingHttpHeaders),
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        'x-accel-buffering': 'no',
      })
      response.write(`retry: ${RETRY_MS}\n\n`)
      open.add(response)
      const send = (frame: LiveFrame, lastWindow: number) => {
        if (response.writableLength > MAX_UNSENT_BYTES) {
          response.destroy()
          return
        }
        response.write(`id: ${lastWindow}\nevent: frame\ndata: ${JSON.stringify(frame)}\n\n`)
      }
      const heartbeat = setInterval(() => response.write(': still here\n\n'), HEARTBEAT_MS)
      heartbeat.unref()
      let unsubscribe: (() => void) | undefined
      let closed = false
      response.once('close', () => {
        closed = true
        open.delete(response)
        clearInterval(heartbeat)
        unsubscribe?.()
      })
      unsubscribe = await feed.subscribe(send, Number.isFinite(lastEventId) ? lastEventId : undefined)
      // The client left while the first frame was being read.
      if (closed) unsubscribe()
    },
  )
}
