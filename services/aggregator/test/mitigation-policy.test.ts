import { CommandForm } from '@heatsink/commands'
import { describe, expect, it } from 'vitest'
import { chooseMitigation, DEFAULT_MITIGATION_POLICY } from '../src/detection/mitigation-policy.js'

const withReplicas = { ...DEFAULT_MITIGATION_POLICY, replicaReadShare: 0.05 }
// 10,000 requests in a 1 s window, `writes` of them writes and `misses` misses.
const shape = (writes: number, misses = 0) => ({
  count: 10_000,
  writes,
  misses,
  windowMs: 1000,
  forms: CommandForm.counterWrite | CommandForm.get,
})

describe('chooseMitigation and replica_read', () => {
  it('never picks replica_read unless the operator says the Redis has replicas', () => {
    for (const writes of [0, 500, 1000, 2000]) {
      expect(chooseMitigation(shape(writes))?.mitigation).not.toBe('replica_read')
    }
  })

  it('picks replica_read for a read-hot key written too often for L1, local_cache below that share', () => {
    expect(chooseMitigation(shape(499), withReplicas)).toEqual({ mitigation: 'local_cache', splitFactor: 1 })
    expect(chooseMitigation(shape(500), withReplicas)).toEqual({ mitigation: 'replica_read', splitFactor: 1 })
    expect(chooseMitigation(shape(2000), withReplicas)).toEqual({
      mitigation: 'replica_read',
      splitFactor: 1,
    })
  })

  it('keeps split for write-hot keys and coalesce for miss-hot keys', () => {
    expect(chooseMitigation(shape(3000), withReplicas)?.mitigation).toBe('split')
    expect(chooseMitigation(shape(1000, 2000), withReplicas)?.mitigation).toBe('coalesce')
  })
})
