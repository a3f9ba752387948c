import { MAX_KEY_BYTES, Mitigation, RedisKey, SplitFactor } from '@heatsink/protocol'
import type { z } from 'zod'
import type { PromotionRequest } from '../detection/registry-port.js'
import { InvalidRegistryInputError } from '../errors.js'

/**
 * What promote() is asked to do: the detector's PromotionRequest (its port onto the registry), so the two
 * cannot drift apart. ttlSeconds null or absent means until demoted; splitFactor defaults to 1.
 */
export type PromoteInput = PromotionRequest

/** PromoteInput with every value checked and every default filled in. */
export interface CheckedPromote {
  key: string
  mitigation: Mitigation
  splitFactor: number
  ttlSeconds: number | null
  source: 'auto' | 'manual'
  actor: string
  reason: string
  requestsPerSecond: number | null
  onsetAt: number | null
}

/** Checks a promotion against the wire's schemas, so nothing the agents would reject reaches the registry. */
export function checkPromote(input: PromoteInput): CheckedPromote {
  const ttlSeconds = input.ttlSeconds ?? null
  if (ttlSeconds !== null && !(Number.isInteger(ttlSeconds) && ttlSeconds > 0)) {
    throw new InvalidRegistryInputError('ttlSeconds', `must be a positive integer, got ${ttlSeconds}`)
  }
  const onsetAt = input.onsetAt ?? null
  if (onsetAt !== null && !(Number.isFinite(onsetAt) && onsetAt >= 0)) {
    throw new InvalidRegistryInputError('onsetAt', `must be epoch milliseconds, got ${onsetAt}`)
  }
  if (input.source !== 'auto' && input.source !== 'manual') {
    throw new InvalidRegistryInputError('source', `must be 'auto' or 'manual', got ${String(input.source)}`)
  }
  const mitigation = parse('mitigation', Mitigation, input.mitigation)
  const splitFactor = parse('splitFactor', SplitFactor, input.splitFactor ?? 1)
  if (mitigation !== 'split' && splitFactor !== 1) {
    throw new InvalidRegistryInputError(
      'splitFactor',
      `must be 1 unless mitigation is split, got ${splitFactor}`,
    )
  }
  return {
    key: checkKey(input.key),
    mitigation,
    splitFactor,
    ttlSeconds,
    source: input.source,
    actor: input.actor,
    reason: input.reason,
    requestsPerSecond: checkRate(input.requestsPerSecond),
    onsetAt,
  }
}

/** The key, if the wire accepts it: 1 to MAX_KEY_BYTES bytes of UTF-8. */
export function checkKey(key: string): string {
  if (!RedisKey.safeParse(key).success) {
    throw new InvalidRegistryInputError('key', `must be 1 to ${MAX_KEY_BYTES} bytes of UTF-8`)
  }
  return key
}

/** A rate for the audit trail: a finite non-negative number, or null. */
export function checkRate(rate: number | null | undefined): number | null {
  if (rate === undefined || rate === null) return null
  if (!(Number.isFinite(rate) && rate >= 0)) {
    throw new InvalidRegistryInputError('requestsPerSecond', `must be a non-negative number, got ${rate}`)
  }
  return rate
}

function parse<S extends z.ZodType>(field: string, schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value)
  if (result.success) return result.data
  throw new InvalidRegistryInputError(
    field,
    `${result.error.issues[0]?.message ?? 'is invalid'}, got ${JSON.stringify(value)}`,
  )
}
