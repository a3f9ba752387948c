import { RedisScript } from '@heatsink/redis-script'
import type { Cluster, Redis } from 'ioredis'

// Next to this module: the build copies the .lua files into dist/lua (scripts/copy-assets.mjs).
const script = (file: string) => RedisScript.fromFile(new URL(`./${file}`, import.meta.url))

const PUBLISH_REGISTRY = script('publishRegistry-1.lua')
const REPAIR_REGISTRY_SNAPSHOT = script('repairRegistrySnapshot-1.lua')
const APPLY_WATCH_ABORTS = script('applyWatchAborts-1.lua')

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

  /** Folds one agent's transactions aborted by WATCH into a window-shard (pairs: key, count). */
  applyWatchAborts: (
    redis: Redis | Cluster,
    windowShardKey: string,
    agentId: string,
    ttlMs: number,
    pairs: ReadonlyArray<string | number>,
  ) => APPLY_WATCH_ABORTS.run<null>(redis, [windowShardKey], [agentId, ttlMs, ...pairs]),
}
