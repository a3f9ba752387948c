/**
 * What getOrLoad stores in Redis: one short header line, then the codec's payload untouched, so a value is
 * never encoded twice and reading the metadata costs one indexOf and one split.
 *
 *   \x1ehs1 <expiresAt> <deltaMs> <kind>\n<payload>
 *
 * `expiresAt` is the logical expiry (epoch ms), `deltaMs` how long the load took (XFetch), `kind` is `v` for a
 * value, `u` or `n` for a loader's "not found" (undefined or null, with an empty payload). The leading record
 * separator keeps ordinary values, written by plain SETs, from being read as envelopes.
 */
export interface Envelope {
  expiresAt: number
  deltaMs: number
  kind: EnvelopeKind
  /** The codec's text; empty for a negative entry. */
  payload: string
}

/** `v`: a value; `u` / `n`: the loader found nothing and returned undefined / null. */
export type EnvelopeKind = 'v' | 'u' | 'n'

const MAGIC = '\u001ehs1 '

/** The envelope's text. */
export function encodeEnvelope(envelope: Envelope): string {
  return `${MAGIC}${envelope.expiresAt} ${envelope.deltaMs} ${envelope.kind}\n${envelope.payload}`
}

/** The envelope in `text`, or undefined when `text` is not one (a value some plain SET wrote). */
export function decodeEnvelope(text: string): Envelope | undefined {
  if (!text.startsWith(MAGIC)) return undefined
  const end = text.indexOf('\n', MAGIC.length)
  if (end < 0) return undefined
  const [expiresAt, deltaMs, kind] = text.slice(MAGIC.length, end).split(' ')
  const expiry = Number(expiresAt)
  const delta = Number(deltaMs)
  if (!Number.isFinite(expiry) || !Number.isFinite(delta) || (kind !== 'v' && kind !== 'u' && kind !== 'n')) {
    return undefined
  }
  return { expiresAt: expiry, deltaMs: delta, kind, payload: text.slice(end + 1) }
}

/**
 * The stored text of a key read without getOrLoad (a plain GET): the payload of an envelope, null for a
 * negative entry, any other text unchanged. For the agent's plain reads of keys that getOrLoad fills.
 */
export function unwrapStored(text: string | null): string | null {
  if (text === null) return null
  const envelope = decodeEnvelope(text)
  if (envelope === undefined) return text
  return envelope.kind === 'v' ? envelope.payload : null
}
