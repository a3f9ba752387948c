/** Base of every error @heatsink/split throws; `code` is stable across versions. */
export class SplitError extends Error {
  readonly code: string
  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = new.target.name
    this.code = code
  }
}

/** A split factor that is not a power of two from 1 to MAX_SPLIT_FACTOR. */
export class InvalidSplitFactorError extends SplitError {
  readonly splitFactor: unknown
  constructor(splitFactor: unknown, max: number) {
    super(
      'E_SPLIT_FACTOR',
      `split factor must be a power of two from 1 to ${max}, received ${JSON.stringify(splitFactor)}`,
    )
    this.splitFactor = splitFactor
  }
}

/** A splitter or reconciler option outside its allowed range. */
export class InvalidSplitOptionError extends SplitError {
  readonly option: string
  constructor(option: string, message: string) {
    super('E_SPLIT_OPTION', `${option}: ${message}`)
    this.option = option
  }
}

/** A split counter's base key or one of its shards holds something that is not an integer. */
export class NotAnIntegerError extends SplitError {
  readonly key: string
  /** The physical Redis key that held the value: the base key or a shard. */
  readonly physicalKey: string
  constructor(key: string, physicalKey: string) {
    super('E_SPLIT_NOT_INTEGER', `split counter ${key}: ${physicalKey} does not hold an integer`)
    this.key = key
    this.physicalKey = physicalKey
  }
}

/** fold() or reshard() could not get the key's fold lease within `timeoutMs`: another agent held it throughout. */
export class FoldTimeoutError extends SplitError {
  readonly key: string
  readonly timeoutMs: number
  constructor(key: string, timeoutMs: number) {
    super('E_SPLIT_FOLD_TIMEOUT', `split key ${key}: fold lease not acquired within ${timeoutMs} ms`)
    this.key = key
    this.timeoutMs = timeoutMs
  }
}

/** A fold lost its lease mid-way (it expired and another agent may hold it); the fold stopped, nothing is lost. */
export class LeaseLostError extends SplitError {
  readonly lease: string
  constructor(lease: string) {
    super('E_SPLIT_LEASE_LOST', `lease ${lease} was lost before the work under it finished`)
    this.lease = lease
  }
}

/** A Lua script answered with a failure code or a reply this build does not understand. */
export class SplitScriptError extends SplitError {
  readonly script: string
  readonly reply: unknown
  constructor(script: string, reply: unknown) {
    super('E_SPLIT_SCRIPT', `script ${script} answered ${JSON.stringify(reply)}`)
    this.script = script
    this.reply = reply
  }
}

// Failure codes the scripts return as their first element; one mapping turns them into typed errors.
const NOT_AN_INTEGER = -1

/** Throws the typed error for a script's failure code; returns when the reply is not a failure. */
export function throwScriptFailure(
  script: string,
  reply: unknown,
  context: { key: string; physicalKey: string },
): void {
  if (!Array.isArray(reply) || typeof reply[0] !== 'number' || reply[0] >= 0) return
  if (reply[0] === NOT_AN_INTEGER) throw new NotAnIntegerError(context.key, context.physicalKey)
  throw new SplitScriptError(script, reply)
}

/** A shard holds a Redis type that splitting never writes there (a list, a stream): something else wrote it. */
export class ShardTypeError extends SplitError {
  readonly key: string
  readonly shard: string
  readonly type: string
  constructor(key: string, shard: string, type: string) {
    super('E_SPLIT_TYPE', `split key ${key}: shard ${shard} holds a ${type}, which splitting never writes`)
    this.key = key
    this.shard = shard
    this.type = type
  }
}
