/** Base of every error this package throws; `code` is stable across versions. */
export class StampedeError extends Error {
  readonly code: string

  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = new.target.name
    this.code = code
  }
}

/**
 * A caller waited `waitedMs` (its maxWaitMs) for a load of `key` and had no stale value to fall back on. The
 * load itself goes on: other callers still get its result, and it still fills the cache.
 */
export class LoadTimeoutError extends StampedeError {
  readonly key: string
  readonly waitedMs: number

  constructor(key: string, waitedMs: number, options?: ErrorOptions) {
    super(
      'E_LOAD_TIMEOUT',
      `gave up waiting for the load of ${JSON.stringify(key)} after ${waitedMs} ms`,
      options,
    )
    this.key = key
    this.waitedMs = waitedMs
  }
}

/** A guard or getOrLoad option outside its allowed range; `option` names it. */
export class InvalidStampedeOptionError extends StampedeError {
  readonly option: string

  constructor(option: string, message: string) {
    super('E_INVALID_STAMPEDE_OPTION', `${option}: ${message}`)
    this.option = option
  }
}

/** The guard was closed before, or while, the call was served. */
export class GuardClosedError extends StampedeError {
  constructor() {
    super('E_GUARD_CLOSED', 'the stampede guard has been closed')
  }
}
