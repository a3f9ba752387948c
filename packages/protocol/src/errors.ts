import { redactUrl } from './redact-url.js'

/** Base of every error this package throws, so callers can catch the wire's failures as one family. */
export abstract class ProtocolError extends Error {
  abstract readonly code: string
}

/** A message that is not JSON, lacks a field, or fails its schema; `field` is the dotted path that failed. */
export class MalformedMessageError extends ProtocolError {
  override readonly name = 'MalformedMessageError'
  override readonly code = 'E_MALFORMED_MESSAGE'
  /** Dotted path of the first failing field (`candidates.3.count`), or `(json)` / `(root)`. */
  readonly field: string

  constructor(field: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.field = field
  }
}

/** A message from a build that speaks another wire version; never decoded, since its fields may mean other things. */
export class WireVersionMismatchError extends ProtocolError {
  override readonly name = 'WireVersionMismatchError'
  override readonly code = 'E_WIRE_VERSION'
  readonly expected: number
  readonly received: number

  constructor(expected: number, received: number) {
    super(
      `message speaks wire version ${received}; this build speaks version ${expected}: upgrade agents and aggregators together`,
    )
    this.expected = expected
    this.received = received
  }
}

/** A namespace that would produce Redis names outside the documented character set. */
export class InvalidNamespaceError extends ProtocolError {
  override readonly name = 'InvalidNamespaceError'
  override readonly code = 'E_INVALID_NAMESPACE'
  readonly namespace: unknown

  constructor(namespace: unknown) {
    super(
      `invalid namespace ${JSON.stringify(namespace)}: expected 1 to 64 characters of A-Z, a-z, 0-9, '_', '.', ':' or '-'`,
    )
    this.namespace = namespace
  }
}

/** A Redis URL a service cannot use; `part` names what is wrong (scheme, sentinels, master name, db, query...). */
export class InvalidRedisUrlError extends ProtocolError {
  override readonly name = 'InvalidRedisUrlError'
  override readonly code = 'E_INVALID_REDIS_URL'
  readonly part: string

  constructor(url: string, part: string, problem: string) {
    super(`invalid Redis URL '${redactUrl(url)}': ${part}: ${problem}`)
    this.part = part
  }
}
