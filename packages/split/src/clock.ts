import type { Clock } from '@heatsink/sketch'

/** Resolves after `ms` on `clock`, so leases and the reconciler wait on injected time in tests. */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimeout(resolve, ms))
}
