import { HOLD_MS } from '../backend/held-requests.js'
import type { ReplySink } from '../backend/reply-sink.js'
import { BackendUnreachableError } from '../errors.js'
import { encodeRequest } from '../resp/request-parser.js'
import type { ClusterBackend } from './cluster-backend.js'

const MINUS = 45
const ASKING = encodeRequest(['ASKING'])
// A request redirected this many times in a row is answered with the last redirect (a topology in flux).
const MAX_REDIRECTS = 5
const REDIRECT = /^-(MOVED|ASK) (\d+) (\S+)\r\n$/
// A master that does not accept connections is asked again this often, the slot table refreshed each time, until
// its replica has taken over (the Cluster's node timeout and election) or HOLD_MS have passed, as an ioredis
// Cluster client waits for the new master rather than failing the command.
const UNREACHABLE_RETRY_MS = 100

/** Discards a reply (ASKING's +OK). */
const DISCARD: ReplySink = { data() {}, end() {}, fail() {} }

/**
 * Follows Redis Cluster's redirects for one request: a reply that starts with anything but `-` streams through to
 * `inner` untouched; an error is held until complete, and when it is `-MOVED <slot> <node>` the request is sent to
 * that node (and the slot table refreshed), when `-ASK <slot> <node>` it is sent there after ASKING (the slot is
 * migrating; the table stays). A request that did not reach Redis because its master refused the connection (a
 * master killed, its replica not yet promoted) is sent again to the slot's master as the refreshed table names it.
 * The client sees only the final reply.
 */
export class RedirectSink implements ReplySink {
  readonly #inner: ReplySink
  readonly #request: Buffer
  readonly #cluster: ClusterBackend
  readonly #index: number
  readonly #redirects: number
  readonly #resp3: boolean
  readonly #slot: number
  readonly #since: number
  #passing = false
  #held: Buffer[] | undefined

  /**
   * `slot`: the request's (0 without keys); `resp3`: the request came on a RESP3 connection, and its redirect goes
   * on one too; `since`: when it was first sent (performance.now()).
   */
  constructor(
    inner: ReplySink,
    request: Buffer,
    cluster: ClusterBackend,
    slot: number,
    index: number,
    resp3: boolean,
    redirects = 0,
    since = performance.now(),
  ) {
    this.#inner = inner
    this.#slot = slot
    this.#since = since
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
    const [, kind, slot, node] = redirect as unknown as [string, string, string, string]
    const connection = this.#cluster.pool(node).shared(this.#index, this.#resp3)
    const next = this.#again(Number(slot), this.#redirects + 1)
    if (kind === 'MOVED') this.#cluster.refresh()
    else connection.send(ASKING, DISCARD)
    connection.send(this.#request, next)
  }

  fail(error: Error): void {
    if (!(error instanceof BackendUnreachableError) || performance.now() - this.#since > HOLD_MS) {
      this.#inner.fail(error)
      return
    }
    this.#cluster.refresh()
    setTimeout(() => {
      if (this.#cluster.closed) {
        this.#inner.fail(error)
        return
      }
      this.#cluster
        .shared(this.#slot, this.#index, this.#resp3)
        .send(this.#request, this.#again(this.#slot, this.#redirects))
    }, UNREACHABLE_RETRY_MS)
  }

  #again(slot: number, redirects: number): RedirectSink {
    return new RedirectSink(
      this.#inner,
      this.#request,
      this.#cluster,
      slot,
      this.#index,
      this.#resp3,
      redirects,
      this.#since,
    )
  }

  backlogged(resume: () => void): boolean {
    return this.#passing && this.#inner.backlogged?.(resume) === true
  }
}
