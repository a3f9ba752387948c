import type { ReplySink } from '../backend/reply-sink.js'
import { encodeRequest } from '../resp/request-parser.js'
import type { ClusterBackend } from './cluster-backend.js'

const MINUS = 45
const ASKING = encodeRequest(['ASKING'])
// A request redirected this many times in a row is answered with the last redirect (a topology in flux).
const MAX_REDIRECTS = 5
const REDIRECT = /^-(MOVED|ASK) \d+ (\S+)\r\n$/

/** Discards a reply (ASKING's +OK). */
const DISCARD: ReplySink = { data() {}, end() {}, fail() {} }

/**
 * Follows Redis Cluster's redirects for one request: a reply that starts with anything but `-` streams through to
 * `inner` untouched; an error is held until complete, and when it is `-MOVED <slot> <node>` the request is sent to
 * that node (and the slot table refreshed), when `-ASK <slot> <node>` it is sent there after ASKING (the slot is
 * migrating; the table stays). The client sees only the final reply.
 */
export class RedirectSink implements ReplySink {
  readonly #inner: ReplySink
  readonly #request: Buffer
  readonly #cluster: ClusterBackend
  readonly #index: number
  readonly #redirects: number
  readonly #resp3: boolean
  #passing = false
  #held: Buffer[] | undefined

  /** `resp3`: the request came on a RESP3 connection, and its redirect goes on one too. */
  constructor(
    inner: ReplySink,
    request: Buffer,
    cluster: ClusterBackend,
    index: number,
    resp3: boolean,
    redirects = 0,
  ) {
    this.#inner = inner
    this.#request = request
    this.#cluster = cluster
    this.#index = index
    this.#resp3 = resp3
    this.#redirects = redirects
  }

  data(bytes: Buffer): void {
    if (this.#passing) this.#inner.data(bytes)
    else if (this.#held === undefined && bytes[0] !== MINUS) {
      this.#passing = true
      this.#inner.data(bytes)
    } else {
      this.#held ??= []
      this.#held.push(bytes)
    }
  }

  end(): void {
    if (this.#passing) {
      this.#inner.end()
      return
    }
    const error = Buffer.concat(this.#held ?? [])
    const redirect = REDIRECT.exec(error.toString('latin1'))
    if (redirect === null || this.#redirects >= MAX_REDIRECTS) {
      this.#inner.data(error)
      this.#inner.end()
      return
    }
    const [, kind, node] = redirect as unknown as [string, string, string]
    const connection = this.#cluster.pool(node).shared(this.#index, this.#resp3)
    const next = new RedirectSink(
      this.#inner,
      this.#request,
      this.#cluster,
      this.#index,
      this.#resp3,
      this.#redirects + 1,
    )
    if (kind === 'MOVED') this.#cluster.refresh()
    else connection.send(ASKING, DISCARD)
    connection.send(this.#request, next)
  }

  fail(error: Error): void {
    this.#inner.fail(error)
  }

  backlogged(resume: () => void): boolean {
    return this.#passing && this.#inner.backlogged?.(resume) === true
  }
}
