import { lookupCommand } from '@heatsink/commands'

// Slots in the table of names seen; a power of two. Far more than the commands any client mix sends.
const SLOTS = 512
// Longer names are no command: lowered each time, never remembered.
const MAX_NAME_BYTES = 32

interface Seen {
  /** The name exactly as a client sent it. */
  readonly sent: Buffer
  readonly lower: string
}

/**
 * Command names as clients send them (GET, get, Get) to the command table's lower case, without making a string
 * per request: a name's bytes are hashed where they lie and compared with the spelling last seen in their slot.
 * Most clients send one spelling of a few dozen commands, so almost every request finds its name here. A slot
 * holds one spelling, the latest, so whatever names clients invent the table stays SLOTS entries.
 */
export class CommandNames {
  readonly #slots = new Array<Seen | undefined>(SLOTS)

  /** The lower-case name whose bytes are `buffer[start, end)`. */
  lower(buffer: Buffer, start: number, end: number): string {
    const length = end - start
    if (length > MAX_NAME_BYTES) return buffer.toString('latin1', start, end).toLowerCase()
    let hash = length
    for (let i = start; i < end; i++) hash = Math.imul(hash ^ (buffer[i] as number), 0x01000193)
    const slot = (hash ^ (hash >>> 15)) & (SLOTS - 1)
    const seen = this.#slots[slot]
    if (seen !== undefined && sameBytes(seen.sent, buffer, start, length)) return seen.lower
    const sent = Buffer.from(buffer.subarray(start, end))
    // The table's own string for a command it knows: V8 interns it, so comparing it with a literal name (the
    // switches of the connection commands) is one pointer comparison rather than a comparison of characters.
    const text = sent.toString('latin1').toLowerCase()
    const lower = lookupCommand(text)?.name ?? text
    this.#slots[slot] = { sent, lower }
    return lower
  }
}

function sameBytes(sent: Buffer, buffer: Buffer, start: number, length: number): boolean {
  if (sent.length !== length) return false
  for (let i = 0; i < length; i++) if (sent[i] !== buffer[start + i]) return false
  return true
}

/** The one table every client connection shares. */
export const COMMAND_NAMES = new CommandNames()
