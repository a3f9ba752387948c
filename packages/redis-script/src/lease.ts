import type { Cluster, Redis } from 'ioredis'
import { RedisScript, type ScriptTarget } from './redis-script.js'

// Beside this module; the build copies the .lua files into dist/lua (scripts/copy-assets.mjs).
const script = (file: string) => RedisScript.fromFile(new URL(`./lua/${file}`, import.meta.url))

const CLAIM_LEASE = script('claimLease-1.lua')
const RENEW_LEASE = script('renewLease-1.lua')
const RELEASE_LEASE = script('releaseLease-1.lua')

/*
 * A lease is one Redis string: its value is the holder's token (random, so two holders never share one), its
 * time to live the lease's. Taking it is SET NX PX; renewing and releasing compare the token first, in one
 * script, so a holder whose lease ran out and passed to another can never extend or delete its successor's.
 * How often to renew, and what to do when a renewal finds the lease gone, is the holder's policy: split renews a
 * reshard or fold lease every third of its lifetime and stops its work on loss; the aggregator's reporter claims
 * every third of its lifetime and reports only while held; stampede extends a fill lease up to a ceiling.
 */

/** Takes the lease if nobody holds it (SET NX PX); true when the caller now holds it. */
export async function acquireLease(
  redis: Redis | Cluster,
  leaseKey: string,
  token: string,
  ttlMs: number,
): Promise<boolean> {
  return (await redis.set(leaseKey, token, 'PX', ttlMs, 'NX')) === 'OK'
}

/** Takes the lease if free, or renews it if the caller holds it, in one step; true when the caller holds it. */
export async function claimLease(
  target: ScriptTarget,
  leaseKey: string,
  token: string,
  ttlMs: number,
): Promise<boolean> {
  return (await CLAIM_LEASE.run<number>(target, [leaseKey], [token, ttlMs])) === 1
}

/** Extends the lease to `ttlMs` from now if the caller still holds it; false when it expired or passed on. */
export async function renewLease(
  target: ScriptTarget,
  leaseKey: string,
  token: string,
  ttlMs: number,
): Promise<boolean> {
  return (await RENEW_LEASE.run<number>(target, [leaseKey], [token, ttlMs])) === 1
}

/** Deletes the lease if the caller still holds it (compare-and-delete); true when it did. */
export async function releaseLease(target: ScriptTarget, leaseKey: string, token: string): Promise<boolean> {
  return (await RELEASE_LEASE.run<number>(target, [leaseKey], [token])) === 1
}
