import { z } from 'zod'

/** Largest key, in UTF-8 bytes, the wire accepts; far above real cache keys, small enough to bound a report. */
export const MAX_KEY_BYTES = 1024
/** Longest agent id, in characters. */
export const MAX_AGENT_ID_LENGTH = 128

/** A raw Redis key: 1 to MAX_KEY_BYTES bytes of UTF-8. */
export const RedisKey = z
  .string()
  .min(1)
  // A UTF-16 code unit never takes more than 3 UTF-8 bytes, so short keys (the hot path) skip the byte count.
  .refine((key) => key.length * 3 <= MAX_KEY_BYTES || Buffer.byteLength(key, 'utf8') <= MAX_KEY_BYTES, {
    message: `key exceeds ${MAX_KEY_BYTES} bytes in UTF-8`,
  })

/**
 * An agent's id, unique within a deployment: printable ASCII without spaces, because the aggregator joins it to
 * keys with a newline in counter field names, and operators read it in logs and metrics.
 */
export const AgentId = z
  .string()
  .min(1)
  .max(MAX_AGENT_ID_LENGTH)
  .regex(/^[\x21-\x7e]+$/, 'agent id must be printable ASCII without spaces')

/** Milliseconds since the Unix epoch. */
export const EpochMs = z.int().min(0)

/** A count of things: a non-negative integer. */
export const Count = z.int().min(0)

/** A strictly positive integer. */
export const PositiveInt = z.int().min(1)
