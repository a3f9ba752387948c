import {
  encodeRegistryEvent,
  encodeSnapshot,
  type HeatsinkNames,
  keyHash,
  type Mitigation,
  type RegistryEntry,
  type RegistryEventInput,
  safeDecodeSnapshot,
  signRegistryMessage,
  WIRE_VERSION,
} from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'

/*
 * A stand-in for the aggregator's publishing side, for tests and benchmarks of agents
 * (`@heatsink/agent/testing`): it writes the registry snapshot hash and publishes registry events exactly as
 * the contract in docs/architecture.md says, without Postgres or an aggregator.
 */

/**
 * Where to publish, for callers that sign like the control plane: the names, and the registry key (the
 * aggregators' HEATSINK_REGISTRY_KEY) every event and the snapshot are signed with. Plain names publish unsigned.
 */
export interface RegistryTarget {
  names: HeatsinkNames
  registryKey?: string
}

function target(to: HeatsinkNames | RegistryTarget): RegistryTarget {
  return 'registryChannel' in to ? { names: to } : to
}

/** A key to register and how, as publishRegistry takes it. */
export interface TestEntry {
  key: string
  mitigation?: Mitigation
  /** Shards of a split key; default 1. */
  splitFactor?: number
}

// Stands in for the aggregator's publish script, as the contract describes it: only if the new version is
// higher, PUBLISH each event, then set the hash's version and snapshot, atomically.
// KEYS[1] snapshot hash; ARGV[1] new version, ARGV[2] encoded snapshot, ARGV[3] channel, ARGV[4..] events.
// Returns 1 when published, 0 when the stored version was not lower.
const PUBLISH_SCRIPT = `
local current = tonumber(redis.call('HGET', KEYS[1], 'version') or '0')
if tonumber(ARGV[1]) <= current then return 0 end
for i = 4, #ARGV do redis.call('PUBLISH', ARGV[3], ARGV[i]) end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'snapshot', ARGV[2])
return 1
`

/** Registers (promote, or update when present) each entry as the aggregator would; returns the new version. */
export async function publishRegistry(
  redis: Redis | Cluster,
  to: HeatsinkNames | RegistryTarget,
  ...entries: TestEntry[]
): Promise<number> {
  const { version, byKey } = await readRegistry(redis, target(to).names)
  const events: RegistryEventInput[] = []
  let next = version
  for (const { key, mitigation = 'local_cache', splitFactor = 1 } of entries) {
    next++
    const entry = registryEntry(key, mitigation, next, splitFactor)
    events.push({
      v: WIRE_VERSION,
      kind: 'registry',
      version: next,
      at: Date.now(),
      type: byKey.has(key) ? 'update' : 'promote',
      entry,
    })
    byKey.set(key, entry)
  }
  await write(redis, target(to), next, [...byKey.values()], events)
  return next
}

/** Removes keys from the registry as the aggregator would; returns the new version. */
export async function demoteRegistry(
  redis: Redis | Cluster,
  to: HeatsinkNames | RegistryTarget,
  ...keys: string[]
): Promise<number> {
  const { version, byKey } = await readRegistry(redis, target(to).names)
  const events: RegistryEventInput[] = []
  let next = version
  for (const key of keys) {
    next++
    events.push({
      v: WIRE_VERSION,
      kind: 'registry',
      version: next,
      at: Date.now(),
      type: 'demote',
      key,
      keyHash: keyHash(key),
      reason: 'test',
    })
    byKey.delete(key)
  }
  await write(redis, target(to), next, [...byKey.values()], events)
  return next
}

/** Changes the snapshot hash without publishing: as if every event of the change had been lost. */
export async function registerSilently(
  redis: Redis | Cluster,
  to: HeatsinkNames | RegistryTarget,
  ...entries: TestEntry[]
) {
  const { version, byKey } = await readRegistry(redis, target(to).names)
  let next = version
  for (const { key, mitigation = 'local_cache' } of entries)
    byKey.set(key, registryEntry(key, mitigation, ++next))
  await write(redis, target(to), next, [...byKey.values()], [])
  return next
}

/** A registry entry as the aggregator would store it (manual, no expiry). */
export function registryEntry(
  key: string,
  mitigation: Mitigation,
  version: number,
  splitFactor = 1,
): RegistryEntry {
  return {
    key,
    keyHash: keyHash(key),
    mitigation,
    splitFactor,
    ttlSeconds: null,
    source: 'manual',
    status: 'active',
    detectedAt: Date.now(),
    expiresAt: null,
    version,
  }
}

async function readRegistry(redis: Redis | Cluster, names: HeatsinkNames) {
  const text = await redis.hget(names.registrySnapshotKey, 'snapshot')
  if (text === null) return { version: 0, byKey: new Map<string, RegistryEntry>() }
  const decoded = safeDecodeSnapshot(text)
  if (!decoded.ok) throw decoded.error
  return {
    version: decoded.value.version,
    byKey: new Map(decoded.value.entries.map((entry) => [entry.key, entry])),
  }
}

async function write(
  redis: Redis | Cluster,
  { names, registryKey }: RegistryTarget,
  version: number,
  entries: RegistryEntry[],
  events: RegistryEventInput[],
): Promise<void> {
  const sign = (text: string) => (registryKey === undefined ? text : signRegistryMessage(text, registryKey))
  const snapshot = sign(
    encodeSnapshot({ v: WIRE_VERSION, kind: 'snapshot', version, at: Date.now(), entries }),
  )
  await redis.eval(
    PUBLISH_SCRIPT,
    1,
    names.registrySnapshotKey,
    String(version),
    snapshot,
    names.registryChannel,
    ...events.map((event) => sign(encodeRegistryEvent(event))),
  )
}

export { commandCalls, StampedWriter } from './replicas/replica-read-probe.js'
