import type { HeatsinkNames } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import { fillChannel } from './fill-channel.js'
import { stampedeScripts } from './scripts.js'

/** What SET takes after the key, as ioredis takes it: value, then EX/PX/NX/XX/GET/KEEPTTL tokens. */
export type SetArguments = [value: string | number | Buffer, ...options: Array<string | number | Buffer>]

/**
 * SET through an agent: writes `key` and breaks any lease on it in one script, so a load in flight cannot
 * overwrite the write. Resolves to what SET returns ('OK', null when NX/XX was not met, the old value with
 * GET). The caller still invalidates locally (guard.invalidate) and tells other agents, as for any write.
 */
export function setAndBreakLease(
  redis: Redis | Cluster,
  names: HeatsinkNames,
  key: string,
  ...args: SetArguments
): Promise<string | null> {
  return stampedeScripts.setAndBreakLease(redis, key, names.leaseKey(key), fillChannel(names), key, args)
}

/** DEL through an agent: deletes `key` and breaks any lease on it in one script; resolves to 0 or 1. */
export function delAndBreakLease(redis: Redis | Cluster, names: HeatsinkNames, key: string): Promise<number> {
  return stampedeScripts.delAndBreakLeases(redis, [key, names.leaseKey(key)], fillChannel(names))
}

/**
 * DEL of several keys through an agent: deletes them all and breaks every lease on them in one script, so the
 * keys go at once as with one DEL (on a Cluster they must share a slot, as for DEL). Resolves to the number of
 * keys deleted; a key named twice counts once, as DEL counts it.
 */
export function delAndBreakLeases(
  redis: Redis | Cluster,
  names: HeatsinkNames,
  keys: readonly string[],
): Promise<number> {
  const keysAndLeases: string[] = []
  for (const key of keys) keysAndLeases.push(key, names.leaseKey(key))
  return stampedeScripts.delAndBreakLeases(redis, keysAndLeases, fillChannel(names))
}
