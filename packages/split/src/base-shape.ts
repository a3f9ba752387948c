import type { SplitContext } from './context.js'
import { call } from './fan-out.js'

/** What a split key's base key holds, as far as deciding how the key may be served. */
export interface BaseShape {
  /** TYPE of the base key ('none' when absent). */
  readonly type: string
  /** PTTL of the base key: -1 without expiry, -2 when absent. */
  readonly pttl: number
  /** The base key's value when it is a string (MGET answers nil for other types instead of failing). */
  readonly value: string | null
}

/** Reads the base key's type, expiry and string value, in one round trip. */
export async function readBaseShape(ctx: SplitContext, key: string): Promise<BaseShape> {
  const [type, pttl, values] = (await ctx.fanOut.all([
    call('type', key),
    call('pttl', key),
    call('mget', key),
  ])) as [string, number, Array<string | null>]
  return { type, pttl, value: values[0] ?? null }
}
