import type { MissStorm, RegistryChange } from '@heatsink/protocol'
import { rate, timestamp } from '../format.js'

/** A registry change or a miss storm: what `heatsink events` prints. */
export type TimelineEvent = RegistryChange | MissStorm

/** Registry changes and miss storms in one list, oldest first, as a log reads. */
export function timeline(changes: readonly RegistryChange[], storms: readonly MissStorm[]): TimelineEvent[] {
  return [...changes, ...storms].sort((a, b) => a.at - b.at)
}

/** Whether an event of the timeline is a miss storm. */
export function isMissStorm(event: TimelineEvent): event is MissStorm {
  return event.type === 'miss_storm'
}

/** One storm as one line: time, key, node, its rate against its baseline, and what Heatsink did. */
export function stormLine(storm: MissStorm): string {
  const node = storm.node === null ? '' : ` on ${storm.node}`
  const did =
    storm.action === 'coalesce_applied'
      ? 'coalesce applied'
      : storm.action === 'already_mitigated'
        ? `already mitigated (${storm.mitigation ?? 'none'})`
        : 'coalescing failed (see the aggregator log)'
  return `${timestamp(storm.at)} miss_storm ${JSON.stringify(storm.key)}${node}: ${rate(storm.missesPerSecond)} misses/s (baseline ${rate(storm.baselinePerSecond)}/s); ${did}`
}
