import { RedisScript, type ScriptArgument } from '@heatsink/redis-script'
import type { Cluster, Redis } from 'ioredis'

// The build copies the .lua files beside this module (scripts/copy-assets.mjs).
const script = (file: string) => RedisScript.fromFile(new URL(`./lua/${file}`, import.meta.url))

const ACQUIRE_LEASE = script('acquireLease-2.lua')
const RELEASE_LEASE = script('releaseLease-1.lua')
const FILL_LEASE = script('fillLease-2.lua')
const SET_AND_BREAK_LEASE = script('setAndBreakLease-2.lua')
const DEL_AND_BREAK_LEASES = script('delAndBreakLeases.lua')

/** The package's Lua scripts, typed; every one that names a cache key takes it first, then its lease key. */
export const stampedeScripts = {
  acquireLease: (
    redis: Redis | Cluster,
    key: string,
    leaseKey: string,
    token: string,
    ms: number,
    peek: '0' | '1',
  ) => ACQUIRE_LEASE.run<[number, string | number | null]>(redis, [key, leaseKey], [token, ms, peek]),

  releaseLease: (redis: Redis | Cluster, leaseKey: string, token: string, channel: string, message: string) =>
    RELEASE_LEASE.run<number>(redis, [leaseKey], [token, channel, message]),

  fillLease: (
    redis: Redis | Cluster,
    key: string,
    leaseKey: string,
    token: string,
    envelope: string,
    ttlMs: number,
    channel: string,
    message: string,
    seenDigest: string,
  ) => FILL_LEASE.run<number>(redis, [key, leaseKey], [token, envelope, ttlMs, channel, message, seenDigest]),

  setAndBreakLease: (
    redis: Redis | Cluster,
    key: string,
    leaseKey: string,
    channel: string,
    message: string,
    setArgs: readonly ScriptArgument[],
  ) =>
    SET_AND_BREAK_LEASE.run<[reply: string | null, broken: 0 | 1]>(
      redis,
      [key, leaseKey],
      [channel, message, ...setArgs],
    ),

  /** `keysAndLeases`: each cache key followed by its lease key. Resolves to DEL's count, then the keys whose lease broke. */
  delAndBreakLeases: (redis: Redis | Cluster, keysAndLeases: readonly string[], channel: string) =>
    DEL_AND_BREAK_LEASES.run<[deleted: number, ...broken: string[]]>(redis, keysAndLeases, [channel]),
}
