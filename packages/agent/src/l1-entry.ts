import { type Codec, decodeEnvelope, type Envelope, type StaleValue } from '@heatsink/stampede'

/**
 * What L1 holds for one key: the text Redis held (a plain value), NIL for an absent key, or an EnvelopeEntry
 * for a value getOrLoad stored. Plain values stay bare strings, so that a plain read's hit costs no more than
 * before getOrLoad existed.
 */
export type L1Value = string | typeof NIL | EnvelopeEntry

// Stands for a cached null (the key was absent), which lru-cache cannot hold as a value.
export const NIL: object = Object.freeze({})

/** A value getOrLoad stored (see @heatsink/stampede's envelope), as plain reads and getOrLoad see it. */
export class EnvelopeEntry {
  /** What a plain read answers: the codec's text, or null for a negative entry (as unwrapStored gives). */
  readonly text: string | null
  readonly envelope: Envelope
  #decoded: StaleValue<unknown> | undefined
  #codec: Codec | undefined

  constructor(envelope: Envelope) {
    this.envelope = envelope
    this.text = envelope.kind === 'v' ? envelope.payload : null
  }

  /** The value getOrLoad returns, decoded once per codec; undefined when the codec cannot read it. */
  decode(codec: Codec): StaleValue<unknown> | undefined {
    if (this.#codec !== codec) {
      this.#codec = codec
      const { kind, payload } = this.envelope
      this.#decoded =
        kind === 'u' ? { value: undefined } : kind === 'n' ? { value: null } : tryDecode(payload, codec)
    }
    return this.#decoded
  }
}

/** The entry for `text` as Redis answered it. */
export function entryFor(text: string | null): L1Value {
  if (text === null) return NIL
  const envelope = decodeEnvelope(text)
  return envelope === undefined ? text : new EnvelopeEntry(envelope)
}

/** What a plain read of `entry` answers. */
export function plainText(entry: L1Value): string | null {
  if (typeof entry === 'string') return entry
  return entry === NIL ? null : (entry as EnvelopeEntry).text
}

/**
 * What getOrLoad gets from `entry`: undefined for an absent key (it must load) or text the codec cannot read
 * (the stampede guard reloads such text too). A value written by a plain SET is decoded on every hit: getOrLoad
 * keys normally hold envelopes, whose decoding is kept.
 */
export function loadedValue(entry: L1Value, codec: Codec): StaleValue<unknown> | undefined {
  if (typeof entry === 'string') return tryDecode(entry, codec)
  return entry === NIL ? undefined : (entry as EnvelopeEntry).decode(codec)
}

function tryDecode(text: string, codec: Codec): StaleValue<unknown> | undefined {
  try {
    return { value: codec.decode(text) }
  } catch {
    return undefined
  }
}
