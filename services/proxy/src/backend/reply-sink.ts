import { decodeReply, ReplyError, replyBytes } from '../resp/reply-codec.js'
import { resp3Bytes } from '../resp/resp3-reply.js'

/** Where a backend connection delivers the reply to one request it sent. */
export interface ReplySink {
  /** Part of the reply's bytes, in order; views into the chunk received. */
  data(bytes: Buffer): void
  /** The reply is complete. */
  end(): void
  /** The connection was lost before the reply completed. */
  fail(error: Error): void
  /**
   * Asked after each part of a reply still streaming: true when its reader is far behind, and the connection then
   * reads no more until `resume` is called (the bytes wait in Redis, not in the proxy). A sink without it is
   * never behind.
   */
  backlogged?(resume: () => void): boolean
}

/** A sink for the proxy's own requests on a connection (AUTH, SELECT): the reply is checked, not relayed. */
export class CheckedSink implements ReplySink {
  #first: number | undefined
  readonly #onError: (message: string) => void
  #text = ''

  constructor(onError: (message: string) => void) {
    this.#onError = onError
  }

  data(bytes: Buffer): void {
    this.#first ??= bytes[0]
    if (this.#first === 45) this.#text += bytes.toString()
  }

  end(): void {
    if (this.#first === 45) this.#onError(this.#text.slice(1).trim())
  }

  fail(): void {}
}

/** A sink that gathers one reply and hands it on decoded; a lost connection comes as a ReplyError. */
export function decodingSink(done: (reply: unknown) => void): ReplySink {
  const chunks: Buffer[] = []
  return {
    data: (bytes) => chunks.push(bytes),
    end: () => done(decodeReply(Buffer.concat(chunks))),
    fail: (error) => done(new ReplyError(error.message)),
  }
}

/** Answers `sink` with a reply the proxy made (merged, combined), in the client's protocol; errors as `-message`. */
export function answer(sink: ReplySink, reply: unknown, resp3: boolean): void {
  sink.data(resp3 ? resp3Bytes(reply, 'plain') : replyBytes(reply))
  sink.end()
}
