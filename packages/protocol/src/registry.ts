import { z } from 'zod'
import { EpochMs, PositiveInt, RedisKey } from './fields.js'
import { KeyHash } from './key-hash.js'
import { Mitigation, SplitFactor } from './mitigation.js'
import { WIRE_VERSION } from './version.js'

/** Who put a key in the registry: the detector, or an operator. */
export const RegistrySource = z.enum(['auto', 'manual'])
export type RegistrySource = z.infer<typeof RegistrySource>

/** One hot key in the registry and how agents should mitigate it. */
export const RegistryEntry = z.object({
  key: RedisKey,
  keyHash: KeyHash,
  mitigation: Mitigation,
  splitFactor: SplitFactor.default(1),
  /** How long the promotion lasts, in seconds; null: until demoted (automatic ones by hysteresis). */
  ttlSeconds: PositiveInt.nullable(),
  source: RegistrySource,
  status: z.literal('active'),
  detectedAt: EpochMs,
  /** When the entry lapses unless renewed; null for entries that never lapse (typically manual ones). */
  expiresAt: EpochMs.nullable(),
  /** Registry version at which this entry last changed. */
  version: PositiveInt,
})
export type RegistryEntry = z.infer<typeof RegistryEntry>
export type RegistryEntryInput = z.input<typeof RegistryEntry>

// `version` increases across the whole registry, so an agent applying events can drop ones older than its
// snapshot and notice gaps.
const eventFields = {
  v: z.literal(WIRE_VERSION),
  kind: z.literal('registry'),
  version: PositiveInt,
  at: EpochMs,
  /** HMAC of the rest of the event when the control plane signs (registry-mac.ts); absent when it does not. */
  mac: z.string().optional(),
}

/** A key became hot. */
export const PromoteEvent = z.object({ ...eventFields, type: z.literal('promote'), entry: RegistryEntry })
export type PromoteEvent = z.infer<typeof PromoteEvent>

/** A registered key's mitigation changed. */
export const UpdateEvent = z.object({ ...eventFields, type: z.literal('update'), entry: RegistryEntry })
export type UpdateEvent = z.infer<typeof UpdateEvent>

/** A key left the registry. */
export const DemoteEvent = z.object({
  ...eventFields,
  type: z.literal('demote'),
  key: RedisKey,
  keyHash: KeyHash,
  reason: z.string(),
})
export type DemoteEvent = z.infer<typeof DemoteEvent>

/** A change to the registry, broadcast on the registry channel. */
export const RegistryEvent = z.discriminatedUnion('type', [PromoteEvent, UpdateEvent, DemoteEvent])
export type RegistryEvent = z.infer<typeof RegistryEvent>
export type RegistryEventInput = z.input<typeof RegistryEvent>
