import { z } from 'zod'

/**
 * How a hot key is relieved: cached in-process, split over shard copies, its loads coalesced, or its reads spread
 * over the primary's replicas (within a bound on their replication lag).
 */
export const Mitigation = z.enum(['local_cache', 'split', 'coalesce', 'replica_read'])
export type Mitigation = z.infer<typeof Mitigation>

/** Largest number of copies a split key is spread over. */
export const MAX_SPLIT_FACTOR = 1024

/** Number of copies of a split key: a power of two from 1 to MAX_SPLIT_FACTOR, so a copy can be picked by masking a hash. */
export const SplitFactor = z
  .int()
  .min(1)
  .max(MAX_SPLIT_FACTOR)
  .refine((n) => (n & (n - 1)) === 0, { message: 'split factor must be a power of two' })
export type SplitFactor = z.infer<typeof SplitFactor>
