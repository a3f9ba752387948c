import type { Cluster, Redis } from 'ioredis'
import { expect } from 'vitest'
import type { CommandLine } from './split-command-lines.js'

/** A client of a standalone Redis or of a Cluster (Heatsink's front doors extend both). */
export type Client = Redis | Cluster

/** Binary values no UTF-8 round trip survives. */
export const BINARY = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0x41])
export const BINARY_2 = Buffer.from([0xff, 0xfd, 0x00, 0x80, 0x41])

/** What a key under test holds before the command: written by a plain client, before the key is split. */
export const CONTENTS = {
  counter: (plain: Client, key: string) => plain.set(key, '40'),
  string: (plain: Client, key: string) => plain.set(key, BINARY),
  set: (plain: Client, key: string) => plain.sadd(key, 'a', BINARY, BINARY_2, '1'),
  zset: (plain: Client, key: string) => plain.zadd(key, 1, 'a', 2, BINARY, 3, 'c'),
  none: async (_plain: Client, _key: string) => {},
} as const

export type Content = keyof typeof CONTENTS

/** The keys of one side of a comparison: K under test, and the other keys command lines name. */
export interface Side {
  K: string
  S: string
  Z: string
  T: string
  D: string
}

/** The keys of one side, named after `prefix`. */
export function sideKeys(prefix: string): Side {
  return { K: `${prefix}:K`, S: `${prefix}:S`, Z: `${prefix}:Z`, T: `${prefix}:T`, D: `${prefix}:D` }
}

/** Writes the other keys' content (the same on both sides). */
export async function fillOthers(plain: Client, side: Side): Promise<void> {
  await plain.sadd(side.S, 'a', 'b')
  await plain.zadd(side.Z, 1, 'a', 5, 'b')
  await plain.set(side.T, 'hello')
}

/** The command line's arguments for one side. */
export function resolve(line: CommandLine, side: Side, payload: Buffer): Array<string | Buffer> {
  return line.map((arg) => {
    if (arg === 'B') return BINARY
    if (arg === 'P') return payload
    if (arg in side) return side[arg as keyof Side]
    return arg
  })
}

/** A reply as the client saw it, or the error's message. */
export async function outcome(client: Client, args: Array<string | Buffer>): Promise<unknown> {
  const [command, ...rest] = args as [string, ...Array<string | Buffer>]
  try {
    return await client.callBuffer(command, ...rest)
  } catch (error) {
    return { error: (error as Error).message }
  }
}

/** A key's whole state, read through `client`: type, value (set members sorted) and whether it expires. */
export async function stateOf(client: Client, key: string): Promise<unknown> {
  const type = await client.type(key)
  const pttl = await client.pttl(key)
  const expiry = pttl > 0 ? 'expires' : pttl
  switch (type) {
    case 'string':
      return { type, expiry, value: await client.getBuffer(key) }
    case 'set':
      return { type, expiry, value: (await client.smembersBuffer(key)).sort(Buffer.compare) }
    case 'zset':
      return { type, expiry, value: await client.zrangeBuffer(key, 0, -1, 'WITHSCORES') }
    default:
      return { type, expiry }
  }
}

/** Sorts an array reply whose order Redis leaves to chance. */
export function sorted(reply: unknown): unknown {
  return Array.isArray(reply) ? [...(reply as Buffer[])].sort(Buffer.compare) : reply
}

// The errors a Cluster answers a command sent to the wrong master, or naming keys of several slots.
const CLUSTER_ERROR = /^(?:MOVED|ASK|CROSSSLOT|TRYAGAIN|CLUSTERDOWN) /

/** Whether an outcome (or any reply of a list of outcomes) is one of a Cluster's redirects or slot errors. */
export function isClusterError(outcome: unknown): boolean {
  if (Array.isArray(outcome)) return outcome.some(isClusterError)
  const error = (outcome as { error?: unknown } | null)?.error
  return typeof error === 'string' && CLUSTER_ERROR.test(error)
}

/** Whether two replies or states are equal as vitest's toEqual compares them (Buffers by their bytes). */
export function isDeepEqual(a: unknown, b: unknown): boolean {
  try {
    expect(a).toEqual(b)
    return true
  } catch {
    return false
  }
}

/** A reply or state as text, Buffers in hex, for a difference's description. */
export function show(value: unknown): string {
  return JSON.stringify(value, (_key, item) =>
    item?.type === 'Buffer' ? `<${Buffer.from(item.data).toString('hex')}>` : item,
  )
}

/** Whether any master of `cluster` holds a split shard's data under `namespace` (a counter spread over shards). */
export async function shardsOnCluster(cluster: Cluster, namespace: string): Promise<boolean> {
  const masters = cluster.nodes('master')
  const shards = await Promise.all(masters.map((master) => master.keys(`${namespace}:split:*:d:*`)))
  return shards.some((names) => names.length > 0)
}
