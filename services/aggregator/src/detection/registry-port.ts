import type { Mitigation, RegistryEntry } from '@heatsink/protocol'
import type { Logger } from 'pino'

/** A promotion as the detector asks for it. */
export interface PromotionRequest {
  key: string
  mitigation: Mitigation
  splitFactor?: number
  ttlSeconds?: number | null
  source: 'auto' | 'manual'
  actor: string
  reason: string
  requestsPerSecond?: number | null
  /** When the reports first showed the key hot; the publisher measures detection latency from it. */
  onsetAt?: number
  /**
   * Where the change is logged, so its line carries its context: an API request's logger (the request id), the
   * detector's bound to the window that crossed. Default: the registry's own logger.
   */
  log?: ChangeLogger
}

/** What a registry change is logged on: a pino logger, or Fastify's request logger (pino's, typed narrower). */
export type ChangeLogger = Pick<Logger, 'info' | 'warn' | 'error'>

/** The part of the registry service detection needs; the registry is the only writer of Postgres. */
export interface RegistryPort {
  promote(input: PromotionRequest): Promise<{ entry: RegistryEntry; created: boolean; changed: boolean }>
  demote(
    key: string,
    options: {
      actor: string
      reason: string
      requestsPerSecond?: number | null
      onlySource?: 'auto'
      log?: ChangeLogger
    },
  ): Promise<boolean>
  list(): Promise<RegistryEntry[]>
}

/** True for the error a registry write raises while Postgres is unreachable: worth retrying later. */
export function isRegistryUnavailable(error: unknown): boolean {
  return error instanceof Error && (error as { code?: unknown }).code === 'E_REGISTRY_UNAVAILABLE'
}
