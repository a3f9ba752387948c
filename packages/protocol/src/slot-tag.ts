import { CLUSTER_SLOTS, redisClusterSlot } from './cluster-slot.js'

let tags: string[] | undefined

// Every slot's shortest tag, found by walking base-36 strings in order: about 160,000 CRCs, a few milliseconds,
// once per process and only if a name needing it is ever built.
function buildTags(): string[] {
  const table = new Array<string>(CLUSTER_SLOTS)
  let missing = CLUSTER_SLOTS
  for (let n = 0; missing > 0; n++) {
    const candidate = n.toString(36)
    const slot = redisClusterSlot(candidate)
    if (table[slot] === undefined) {
      table[slot] = candidate
      missing--
    }
  }
  return table
}

/**
 * A short string that hashes to `slot`: put inside braces, it makes any Redis name land in that slot. Heatsink
 * uses it to keep a helper key beside the key it guards (so one script can touch both on a Cluster, whatever
 * braces the application's key holds), and to place split shards on slots of its choosing.
 */
export function slotTag(slot: number): string {
  if (!Number.isInteger(slot) || slot < 0 || slot >= CLUSTER_SLOTS) {
    throw new RangeError(`slot must be an integer from 0 to ${CLUSTER_SLOTS - 1}, received ${slot}`)
  }
  tags ??= buildTags()
  return tags[slot] as string
}

/** `{tag}` for the slot of `key`: a prefix that puts another name in the same slot as `key`. */
export function sameSlotTag(key: string): string {
  return `{${slotTag(redisClusterSlot(key))}}`
}
