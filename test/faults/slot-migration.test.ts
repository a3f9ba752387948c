import { expect } from 'vitest'
import { throughEachDoor } from './support/cluster-doors.js'
import { migrateSlotOf } from './support/slot-migration.js'

// The key's slot moves to another master (the sequence `redis-cli --cluster reshard` runs for each slot) while the
// writer increments it.
throughEachDoor(
  "a migration of a promoted key's slot",
  (servers, key) => migrateSlotOf(servers, key),
  (figures) => {
    // L1 answered a good share of the reads after the move (most of them on a quiet machine; 27% in one full run
    // under load), so a missed invalidation would have shown as a stale read.
    expect(figures.heatsinkL1Hits).toBeGreaterThan(figures.heatsinkReads / 10)
  },
)
