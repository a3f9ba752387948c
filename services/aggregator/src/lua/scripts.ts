import { RedisScript } from '@heatsink/redis-script'
import type { Cluster, Redis } from 'ioredis'

// Next to this module: the build copies the .lua files into dist/lua (scripts/copy-assets.mjs).
const script = (file: string) => RedisScript.fromFile(new URL(`./${file}`, import.meta.url))

const PUBLISH_REGISTRY = script('publishRegistry-1.lua')
const APPLY_REPORT = script('applyReport-1.lua')
const APPLY_RATES = script('applyRates-1.lua')
const REPAIR_REGISTRY_SNAPSHOT = script('repairRegistrySnapshot-1.lua')
const CLAIM_LEASE = script('claimLease-1.lua')
const RELEASE_LEASE = script('releaseLease-1.lua')

/** The aggregator's Lua scripts, typed. */
export const aggregatorScripts = {
  /** Publishes the events above the stored version and stores the snapshot; resolves to the versions published. */
  publishRegistry: (
    redis: Redis | Cluster,
    snapshotKey: string,
    snapshotVersion: number,
    snapshot: string,
    channel: string,
    eventVersionsAndPayloads: ReadonlyArray<string | number>,
  ) =>
    PUBLISH_REGISTRY.run<number[]>(
      redis,
      [snapshotKey],
      [snapshotVersion, snapshot, channel, ...eventVersionsAndPayloads],
    ),

  /** Replaces the snapshot hash if its version is still `found`; resolves to 1 when it did, 0 otherwise. */
  repairRegistrySnapshot: (
    redis: Redis | Cluster,
    snapshotKey: string,
    found: string,
    snapshotVersion: number,
    snapshot: string,
  ) => REPAIR_REGISTRY_SNAPSHOT.run<number>(redis, [snapshotKey], [found, snapshotVersion, snapshot]),

  /** Folds one agent's counts into a window-shard; resolves to the crossing and warm keys, flattened. */
  applyReport: (redis: Redis | Cluster, windowShardKey: string, args: ReadonlyArray<string | number>) =>
    APPLY_REPORT.run<Array<string | number>>(redis, [windowShardKey], args),

  /** Folds one agent's measured rates into a window-shard; resolves to the keys whose summed rate crossed. */
  applyRates: (redis: Redis | Cluster, windowShardKey: string, args: ReadonlyArray<string | number>) =>
    APPLY_RATES.run<Array<string | number>>(redis, [windowShardKey], args),

  /** Takes the lease if free or renews the caller's own for `ttlMs`; resolves to 1 when the caller holds it. */
  claimLease: (redis: Redis | Cluster, leaseKey: string, holder: string, ttlMs: number) =>
    CLAIM_LEASE.run<number>(redis, [leaseKey], [holder, ttlMs]),

  /** Deletes the lease if `holder` holds it; resolves to 1 when it did. */
  releaseLease: (redis: Redis | Cluster, leaseKey: string, holder: string) =>
    RELEASE_LEASE.run<number>(redis, [leaseKey], [holder]),
}
