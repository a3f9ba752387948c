import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'

/**
 * Makes `app.close()` finish within `timeoutMs` whatever clients do, answering the requests in progress.
 *
 * Node's `server.close()` (and Fastify's `forceCloseConnections: 'idle'`) closes only connections that are
 * between two requests. A connection that has not sent its first request yet (load balancers, proxies and HTTP
 * clients open them ahead of need) or has sent half of one counts as busy, and keeps the server open until Node's
 * header timeout, a minute or more; a keep-alive connection whose request was in progress stays open after its
 * answer. So, at close:
 * - a connection with no request in progress is destroyed at once;
 * - a request in progress is answered, with `Connection: close` when its headers are not sent yet, and its
 *   connection is ended after the answer;
 * - after `timeoutMs`, whatever is still open is destroyed, answered or not.
 */
export function drainOnClose(app: FastifyInstance, timeoutMs: number): void {
  const server = app.server
  const sockets = new Set<Socket>()
  // Answers in progress per connection; HTTP/1.1 pipelining can queue several on one.
  const busy = new Map<Socket, Set<ServerResponse>>()
  let closing = false

  server.on('connection', (socket: Socket) => {
    // Accepted in the moment between close() and the listener shutting: nothing was asked on it yet.
    if (closing) {
      socket.destroy()
      return
    }
    sockets.add(socket)
    socket.once('close', () => {
      sockets.delete(socket)
      busy.delete(socket)
    })
  })

  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket
    let answers = busy.get(socket)
    if (answers === undefined) {
      answers = new Set()
      busy.set(socket, answers)
    }
    answers.add(response)
    response.once('close', () => {
      answers.delete(response)
      if (answers.size > 0) return
      busy.delete(socket)
      // Answered while closing: the connection takes no further request. end() lets the answer's bytes out first.
      if (closing) socket.end()
    })
  })

  app.addHook('preClose', (done) => {
    closing = true
    for (const socket of sockets) {
      const answers = busy.get(socket)
      if (answers === undefined) {
        socket.destroy()
        continue
      }
      for (const response of answers) if (!response.headersSent) response.setHeader('connection', 'close')
    }
    if (sockets.size > 0) {
      const deadline = setTimeout(() => {
        app.log.warn(
          { connections: sockets.size, timeoutMs },
          'requests still in progress at the shutdown deadline; closing their connections',
        )
        for (const socket of sockets) socket.destroy()
      }, timeoutMs)
      // The deadline never keeps a process alive on its own, and ends with the server.
      deadline.unref()
      server.once('close', () => clearTimeout(deadline))
    }
    done()
  })
}
