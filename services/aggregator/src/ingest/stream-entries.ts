import { STREAM_FIELD } from '@heatsink/protocol'

/** A stream entry as ioredis returns it: id, then a flat field/value list. */
export type StreamEntry = [id: string, fields: string[]]

/** The encoded message of an entry, or undefined when the entry has no message field. */
export function messageOf(fields: readonly string[]): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === STREAM_FIELD) return fields[i + 1]
  return undefined
}

/** The entries of an XREADGROUP reply for one stream (ioredis gives null when the block timed out). */
export function entriesOf(reply: unknown): StreamEntry[] {
  if (!Array.isArray(reply)) return []
  const first = reply[0] as [string, StreamEntry[]] | undefined
  return first?.[1] ?? []
}
