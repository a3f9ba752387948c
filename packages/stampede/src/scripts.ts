import { readFileSync } from 'node:fs'
import type { Cluster, Redis } from 'ioredis'

type Arg = string | number | Buffer

/** The package's Lua scripts as ioredis commands; every one takes the cache key first, then its lease key. */
export interface StampedeCommands {
  hsAcquireLease(
    key: string,
    leaseKey: string,
    token: string,
    ms: number,
    peek: '0' | '1',
  ): Promise<[number, string | number | null]>
  hsExtendLease(leaseKey: string, token: string, ms: number): Promise<number>
  hsReleaseLease(leaseKey: string, token: string, channel: string, message: string): Promise<number>
  hsFillLease(
    key: string,
    leaseKey: string,
    token: string,
    envelope: string,
    ttlMs: number,
    channel: string,
    message: string,
  ): Promise<number>
  hsSetAndBreakLease(
    key: string,
    leaseKey: string,
    channel: string,
    message: string,
    ...setArgs: Arg[]
  ): Promise<string | null>
  hsDelAndBreakLease(key: string, leaseKey: string, channel: string, message: string): Promise<number>
}

/** A client with the scripts defined on it. */
export type ScriptedRedis = (Redis | Cluster) & StampedeCommands

// Name in the client -> the file, whose name ends in its number of keys.
const SCRIPTS = {
  hsAcquireLease: 'acquireLease-2.lua',
  hsExtendLease: 'extendLease-1.lua',
  hsReleaseLease: 'releaseLease-1.lua',
  hsFillLease: 'fillLease-2.lua',
  hsSetAndBreakLease: 'setAndBreakLease-2.lua',
  hsDelAndBreakLease: 'delAndBreakLease-2.lua',
} as const

let sources: Array<[name: string, numberOfKeys: number, lua: string]> | undefined

// Read once per process, on first use; the build copies the .lua files beside this module.
function loadSources(): Array<[string, number, string]> {
  sources ??= Object.entries(SCRIPTS).map(([name, file]) => [
    name,
    Number(/-(\d+)\.lua$/.exec(file)?.[1]),
    readFileSync(new URL(`./lua/${file}`, import.meta.url), 'utf8'),
  ])
  return sources
}

/**
 * Defines the scripts on `redis` (once per client) and returns it typed with them. ioredis runs each by
 * EVALSHA and falls back to EVAL the first time a server lacks it, and routes it on a Cluster by its first key.
 */
export function withScripts(redis: Redis | Cluster): ScriptedRedis {
  if (!('hsFillLease' in redis)) {
    for (const [name, numberOfKeys, lua] of loadSources()) redis.defineCommand(name, { numberOfKeys, lua })
  }
  return redis as ScriptedRedis
}
