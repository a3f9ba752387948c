import type { Command } from 'ioredis'
import { FALL_THROUGH, type Route } from '../data-plane/route.js'

/** The parts of an ioredis Command the front door touches (most are untyped internals of ioredis). */
export interface RoutableCommand {
  name: string
  args: unknown[]
  inTransaction: boolean
  replyEncoding?: BufferEncoding | null
  promise: Promise<unknown>
  resolve(reply: unknown): unknown
  reject(error: Error): void
}

/** The `stream` ioredis hands sendCommand for a pipeline: it writes once every queued command wrote. */
interface PipelineStream {
  isPipeline: true
  write(data: string | Buffer): void
  /** Where the pipeline flushes: a Cluster's pipeline has none until it sends a command (the node it chose). */
  destination: { redis?: { stream?: { write(data: string | Buffer): unknown } } }
}

// Takes a flush of nothing.
const NOTHING_SENT = { redis: { stream: { write: () => true } } }

/** Sends a command the way ioredis would have (super.sendCommand of the client). */
export type Send = (command: Command, stream?: unknown) => unknown

/**
 * Carries out the core's route for one ioredis command. A command answered here never reaches the socket, but
 * a pipeline counts its commands' writes before it flushes, so it is told of an empty one.
 */
export function carryRoute(route: Route, command: RoutableCommand, stream: unknown, send: Send): unknown {
  switch (route.kind) {
    case 'served':
      skipWrite(stream)
      command.resolve(ownCopy(route.reply, command.replyEncoding))
      return command.promise
    case 'deferred':
      skipWrite(stream)
      route.reply.then(
        (reply) => command.resolve(ownCopy(reply, command.replyEncoding)),
        (error: Error) => {
          if (error === FALL_THROUGH) send(command as unknown as Command)
          else command.reject(error)
        },
      )
      return command.promise
    case 'after':
      skipWrite(stream)
      // Off the pipeline's write: by now the pipeline has flushed, so the command goes on the socket in turn.
      route.ready.then(() => {
        const next = route.next()
        if (next === undefined) send(command as unknown as Command)
        else carryRoute(next, command, undefined, send)
      })
      return command.promise
    case 'send': {
      if (route.args !== undefined) command.args = route.args
      const { resolve, reject } = command
      command.resolve = (reply: unknown) => {
        const outcome = route.settle(null, reply)
        return outcome instanceof Error ? reject(outcome) : resolve(outcome)
      }
      command.reject = (error: Error) => {
        const outcome = route.settle(error, undefined)
        reject(outcome instanceof Error ? outcome : error)
      }
      return send(command as unknown as Command, stream)
    }
  }
}

function skipWrite(stream: unknown): void {
  if (stream === undefined || (stream as PipelineStream).isPipeline !== true) return
  const pipeline = stream as PipelineStream
  const destination = pipeline.destination
  if (destination.redis?.stream !== undefined) {
    pipeline.write('')
    return
  }
  // No connection yet: no command of the pipeline has been written (a Cluster's pipeline whose commands so far
  // were all answered here, or whose node is still connecting and queues them), so should this write complete
  // the pipeline, its flush has nothing to send. The destination is kept for the commands sent after it.
  pipeline.destination = NOTHING_SENT
  try {
    pipeline.write('')
  } finally {
    pipeline.destination = destination
  }
}

/**
 * A cached reply is shared by every caller of every client in the process. String replies are made fresh by
 * ioredis's own conversion; a caller asking for Buffers gets copies, so that changing one changes nobody else's.
 */
function ownCopy(reply: unknown, encoding: BufferEncoding | null | undefined): unknown {
  if (encoding) return reply
  if (Buffer.isBuffer(reply)) return Buffer.from(reply)
  if (Array.isArray(reply)) return reply.map((item) => ownCopy(item, encoding))
  return reply
}
