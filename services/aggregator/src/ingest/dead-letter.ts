import type { Cluster, Redis } from 'ioredis'

/** A report stream entry set aside, and why. */
export interface DeadLetter {
  /** The report stream it was read from, and its id there. */
  stream: string
  id: string
  /** A stable code: E_MALFORMED_MESSAGE, E_WINDOW_MISMATCH, ... */
  reason: string
  /** What was wrong, for the operator. */
  message: string
  /** The entry's message as it was read. */
  raw: string
}

// Capped like every stream Heatsink writes, so a flood of bad entries cannot fill Redis.
const DEAD_LETTER_MAXLEN = 10_000
const MAX_DEAD_LETTER_RAW = 16_384

/**
 * Appends an entry to the dead-letter stream. Set aside, not dropped: an operator can read what was wrong and with
 * which message (its first 16 KiB).
 */
export async function appendDeadLetter(
  redis: Redis | Cluster,
  deadLetterStream: string,
  entry: DeadLetter,
): Promise<void> {
  await redis.xadd(
    deadLetterStream,
    'MAXLEN',
    '~',
    DEAD_LETTER_MAXLEN,
    '*',
    'stream',
    entry.stream,
    'id',
    entry.id,
    'reason',
    entry.reason,
    'message',
    entry.message,
    'raw',
    entry.raw.slice(0, MAX_DEAD_LETTER_RAW),
  )
}
