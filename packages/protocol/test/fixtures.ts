import { keyHash, type RegistryEntry, WIRE_VERSION, type WindowReport } from '../src/index.js'

/** A valid report with `n` candidates. */
export function report(n = 3): WindowReport {
  return {
    v: WIRE_VERSION,
    kind: 'report',
    agentId: 'agent-1',
    seq: 7,
    windowStart: 1_700_000_000_000,
    windowMs: 1000,
    total: 5000,
    dropped: 0,
    partial: false,
    candidates: Array.from({ length: n }, (_, i) => ({
      key: `product:${i}`,
      count: 100 + i,
      reads: 90,
      writes: i,
      misses: 0,
    })),
    hotKeyStats: [
      {
        key: 'product:0',
        l1Hits: 80,
        l1Misses: 2,
        coalescedWaiters: 5,
        upstreamLoads: 1,
        staleServes: 0,
        leaseWaits: 3,
        timeouts: 0,
        misses: 0,
        splitShardCounts: [10, 12, 9, 11],
      },
    ],
  }
}

/** A valid registry entry. */
export function entry(key = 'product:12345'): RegistryEntry {
  return {
    key,
    keyHash: keyHash(key),
    mitigation: 'split',
    splitFactor: 4,
    ttlSeconds: 30,
    source: 'auto',
    status: 'active',
    detectedAt: 1_700_000_000_000,
    expiresAt: 1_700_000_600_000,
    version: 3,
  }
}
