import type { HeatsinkNames } from '@heatsink/protocol'
import type { Cluster, Redis } from 'ioredis'
import { announcerOf, type FillAnnouncer } from './fill-channel.js'
import { stampedeScripts } from './scripts.js'

/** What SET takes after the key, as ioredis takes it: value, then EX/PX/NX/XX/GET/KEEPTTL tokens. */
export type SetArguments = [value: string | number | Buffer, ...options: Array<string | number | Buffer>]

/**
 * SET through an agent: writes `key` and breaks any lease on it in one script, so a load in flight cannot
 * overwrite the write. Resolves to what SET returns ('OK', null when NX/XX was not met, the old value with
 * GET). The caller still invalidates locally (guard.invalidate) and tells other agents, as for any write.
 * `names`: the deployment's names, or its FillAnnouncer when lease ends are announced on a control Redis.
 */
export async function setAndBreakLease(
  redis: Redis | Cluster,
  names: HeatsinkNames | FillAnnouncer,
  key: string,
  ...args: SetArguments
): Promise<string | null> {
  const announcer = announcerOf(names)
  const leaseKey = announcer.names.leaseKey(key)
  const [reply, broken] = await stampedeScripts.setAndBreakLease(
    redis,
    key,
    leaseKey,
    announcer.scriptChannel,
    key,
    args,
  )
  if (broken === 1) announcer.ended([key])
  return reply
}

/** DEL through an agent: deletes `key` and breaks any lease on it in one script; resolves to 0 or 1. */
export function delAndBreakLease(
  redis: Redis | Cluster,
  names: HeatsinkNames | FillAnnouncer,
  key: string,
): Promise<number> {
  return delAndBreakLeases(redis, names, [key])
}

/**
 * DEL of several keys through an agent: deletes them all and breaks every lease on them in one script, so the
 * keys go at once as with one DEL (on a Cluster they must share a slot, as for DEL). Resolves to the number of
 * keys deleted; a key named twice counts once, as DEL counts it.
 */
export async function delAndBreakLeases(
  redis: Redis | Cluster,
  names: HeatsinkNames | FillAnnouncer,
  keys: readonly string[],
): Promise<number> {
  const announcer = announcerOf(names)
  const keysAndLeases: string[] = []
  for (const key of keys) keysAndLeases.push(key, announcer.names.leaseKey(key))
  const [deleted, ...broken] = await stampedeScripts.delAndBreakLeases(
    redis,
    keysAndLeases,
    announcer.scriptChannel,
  )
  if (broken.length > 0) announcer.ended(broken)
  return deleted
}
