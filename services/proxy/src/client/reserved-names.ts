import { type CommandSpec, keyIndexes } from '@heatsink/commands'
import { HEATSINK_NAME_PARTS } from '@heatsink/protocol'
import { errorReply } from '../resp/reply-codec.js'

/** Finds the argument of one call that names Heatsink's state, if any, beyond its declared keys. */
type NamedArgument = (args: Buffer[], names: ReservedNames) => Refusal | undefined

/** Why a request is refused: the reserved name it used, and what kind of name it is. */
interface Refusal {
  readonly what: 'key' | 'channel' | 'pattern' | 'script'
  readonly name: Buffer
}

// Commands whose arguments name Heatsink's state other than through their declared keys: channels, SORT's BY and
// GET patterns, and script bodies (a script can build any key name, so one that spells the prefix is refused).
const NAMED_ARGUMENTS: ReadonlyMap<string, NamedArgument> = new Map<string, NamedArgument>([
  ['publish', (args, names) => names.first(args, 'channel', 0, 1)],
  ['spublish', (args, names) => names.first(args, 'channel', 0, 1)],
  ['subscribe', (args, names) => names.first(args, 'channel', 0, args.length)],
  ['ssubscribe', (args, names) => names.first(args, 'channel', 0, args.length)],
  ['psubscribe', (args, names) => names.first(args, 'pattern', 0, args.length)],
  ['sort', (args, names) => names.first(args, 'pattern', 1, args.length)],
  ['sort_ro', (args, names) => names.first(args, 'pattern', 1, args.length)],
  ['eval', (args, names) => names.inScript(args[0])],
  ['eval_ro', (args, names) => names.inScript(args[0])],
  ['script', (args, names) => (isSubcommand(args, 'load') ? names.inScript(args[1]) : undefined)],
  ['function', (args, names) => (isSubcommand(args, 'load') ? names.inScript(args.at(-1)) : undefined)],
])

// A wrong-arity command, queued after a refused one inside MULTI: Redis then answers EXEC with EXECABORT, as it
// does for any command refused while queuing.
const ABORT_TRANSACTION = Buffer.from('*1\r\n$3\r\nGET\r\n')

/** One name (or family of names, `family`) after `<namespace>:`, as bytes. */
interface NamePart {
  readonly bytes: Buffer
  readonly family: boolean
}

/**
 * The names Heatsink keeps in the application's Redis (HEATSINK_NAME_PARTS under `<namespace>:`): report streams,
 * counters, the registry snapshot, leases, split shards and their gates, the registry, invalidation, tuning and
 * fill channels. A client of the proxy may not read, write, delete or publish them: a request naming one is
 * refused with an error saying which name and why, and never reaches Redis. Other keys under the namespace (an
 * application's `<namespace>:user:1`) are the application's.
 */
export class ReservedNames {
  readonly namespace: string
  readonly #prefix: Buffer
  readonly #first: number
  // The parts by their first byte, so that a key under the namespace is compared with a few of them at most.
  readonly #parts = new Map<number, NamePart[]>()

  constructor(namespace: string) {
    this.namespace = namespace
    this.#prefix = Buffer.from(`${namespace}:`, 'latin1')
    this.#first = this.#prefix[0] as number
    const add = (text: string, family: boolean) => {
      const bytes = Buffer.from(text, 'latin1')
      const list = this.#parts.get(bytes[0] as number) ?? []
      list.push({ bytes, family })
      this.#parts.set(bytes[0] as number, list)
    }
    for (const family of HEATSINK_NAME_PARTS.families) add(family, true)
    for (const single of HEATSINK_NAME_PARTS.single) add(single, false)
  }

  /**
   * Whether `name` is one of Heatsink's. On every keyed request's path: the namespace's first byte settles almost
   * every call, so the check costs a comparison and no allocation.
   */
  reserved(name: Buffer): boolean {
    if (name[0] !== this.#first) return false
    const prefix = this.#prefix
    return (
      name.length > prefix.length && sameBytes(name, 0, prefix) && this.#partAt(name, prefix.length, true)
    )
  }

  // Whether one of Heatsink's names continues `bytes` at `at`; `whole`: and ends where `bytes` ends (else a single
  // name may be followed by anything, as in a script's text).
  #partAt(bytes: Buffer, at: number, whole: boolean): boolean {
    const parts = this.#parts.get(bytes[at] as number)
    if (parts === undefined) return false
    for (const part of parts) {
      const end = at + part.bytes.length
      if (bytes.length < end || (whole && !part.family && bytes.length !== end)) continue
      if (sameBytes(bytes, at, part.bytes)) return true
    }
    return false
  }

  /** The error reply refusing `name args`, or undefined when the request names none of Heatsink's state. */
  refusal(name: string, args: Buffer[], spec: CommandSpec | undefined): Buffer | undefined {
    if (spec === undefined) return undefined
    if (spec.singleKey >= 0) {
      const key = args[spec.singleKey]
      return key !== undefined && this.reserved(key) ? this.#reply({ what: 'key', name: key }) : undefined
    }
    const named = NAMED_ARGUMENTS.get(name)?.(args, this)
    if (named !== undefined) return this.#reply(named)
    for (const index of keyIndexes(spec, args)) {
      const key = args[index]
      if (key !== undefined && this.reserved(key)) return this.#reply({ what: 'key', name: key })
    }
    return undefined
  }

  /** What to queue behind a refused command inside MULTI, so that EXEC aborts the transaction as Redis would. */
  get abortTransaction(): Buffer {
    return ABORT_TRANSACTION
  }

  /** The first of args[from..to) that is a reserved name. */
  first(args: Buffer[], what: Refusal['what'], from: number, to: number): Refusal | undefined {
    for (let i = from; i < Math.min(to, args.length); i++) {
      const name = args[i] as Buffer
      if (this.reserved(name)) return { what, name }
    }
    return undefined
  }

  /** A script body that spells one of Heatsink's names anywhere (a script can build any key it likes). */
  inScript(body: Buffer | undefined): Refusal | undefined {
    if (body === undefined) return undefined
    const prefix = this.#prefix
    for (let at = body.indexOf(prefix); at !== -1; at = body.indexOf(prefix, at + 1)) {
      if (this.#partAt(body, at + prefix.length, false)) return { what: 'script', name: prefix }
    }
    return undefined
  }

  #reply(refusal: Refusal): Buffer {
    const ns = this.namespace
    const name = refusal.name.toString('utf8')
    if (refusal.what === 'script') {
      return errorReply(
        `ERR scripts that name Heatsink's own keys or channels ('${name}...') are refused: they are reserved for Heatsink's own state (namespace '${ns}')`,
      )
    }
    const what = refusal.what === 'key' ? '' : `${refusal.what} `
    return errorReply(`ERR ${what}'${name}' is reserved for Heatsink's own state (namespace '${ns}')`)
  }
}

// Whether `bytes` holds `expected` at `at` (the caller checked the length). A loop, not Buffer.compare: for names
// this short the native call's argument checks cost more than the comparison (about 20 times, measured).
function sameBytes(bytes: Buffer, at: number, expected: Buffer): boolean {
  for (let i = 0; i < expected.length; i++) if (bytes[at + i] !== expected[i]) return false
  return true
}

function isSubcommand(args: Buffer[], subcommand: string): boolean {
  return args[0]?.toString('latin1').toLowerCase() === subcommand
}
