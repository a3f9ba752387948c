import { z } from 'zod'
import { Count, EpochMs } from './fields.js'
import { RegistryEntry } from './registry.js'
import { WIRE_VERSION } from './version.js'

/** The whole registry as of `version`; agents load it, then apply only events with a higher version. */
export const RegistrySnapshot = z.object({
  v: z.literal(WIRE_VERSION),
  kind: z.literal('snapshot'),
  /** 0 for a registry that has never changed. */
  version: Count,
  at: EpochMs,
  entries: z.array(RegistryEntry),
  /** HMAC of the rest of the snapshot when the control plane signs (registry-mac.ts); absent when it does not. */
  mac: z.string().optional(),
})
export type RegistrySnapshot = z.infer<typeof RegistrySnapshot>
export type RegistrySnapshotInput = z.input<typeof RegistrySnapshot>
