/** Base of every error the aggregator throws, so callers can catch its failures as one family. */
export abstract class AggregatorError extends Error {
  abstract readonly code: string
}

/** One or more environment variables failed validation; `problems` has one line per bad value. */
export class ConfigError extends AggregatorError {
  override readonly name = 'ConfigError'
  override readonly code = 'E_CONFIG'
  /** `VARIABLE: what was expected, got 'value'`, one per problem. */
  readonly problems: readonly string[]

  constructor(problems: readonly string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`)
    this.problems = problems
  }
}

/** Postgres could not be reached, so a registry read or write did not happen; nothing was half-applied. */
export class RegistryUnavailableError extends AggregatorError {
  override readonly name = 'RegistryUnavailableError'
  override readonly code = 'E_REGISTRY_UNAVAILABLE'
  /** What was attempted: `promote`, `demote`, `list`, ... */
  readonly operation: string

  constructor(operation: string, options: { cause: unknown }) {
    super(`registry unavailable: ${operation} failed because Postgres cannot be reached`, options)
    this.operation = operation
  }
}

/** A registry operation was given a value its schema rejects; `field` names it. */
export class InvalidRegistryInputError extends AggregatorError {
  override readonly name = 'InvalidRegistryInputError'
  override readonly code = 'E_INVALID_REGISTRY_INPUT'
  readonly field: string

  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super(`${field} ${message}`, options)
    this.field = field
  }
}

/** Two different keys share a key hash; 64 bits make this all but impossible, but the registry refuses to merge them. */
export class KeyHashCollisionError extends AggregatorError {
  override readonly name = 'KeyHashCollisionError'
  override readonly code = 'E_KEY_HASH_COLLISION'
  readonly key: string
  readonly keyHash: string

  constructor(key: string, keyHash: string, existingKey: string) {
    super(`key hash ${keyHash} of ${JSON.stringify(key)} is already taken by ${JSON.stringify(existingKey)}`)
    this.key = key
    this.keyHash = keyHash
  }
}

/** Applying the SQL migrations failed; the database is left as the last complete migration put it. */
export class MigrationError extends AggregatorError {
  override readonly name = 'MigrationError'
  override readonly code = 'E_MIGRATION'

  constructor(message: string, options: { cause: unknown }) {
    super(message, options)
  }
}
