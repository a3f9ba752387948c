import { z } from 'zod'
import { AgentId, EpochMs, RedisKey } from './fields.js'
import { WIRE_VERSION } from './version.js'

/** Most keys one invalidation may name; a sender with more sends several messages. */
export const MAX_INVALIDATION_KEYS = 1000

/** Keys whose locally cached values are stale, broadcast on the invalidation channel. */
export const Invalidation = z.object({
  v: z.literal(WIRE_VERSION),
  kind: z.literal('invalidate'),
  /** The agent that wrote the keys, so it can recognise and skip its own broadcast. */
  origin: AgentId,
  keys: z.array(RedisKey).min(1).max(MAX_INVALIDATION_KEYS),
  at: EpochMs,
})
export type Invalidation = z.infer<typeof Invalidation>
