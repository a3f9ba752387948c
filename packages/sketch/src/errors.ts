/** Base class of every error this package throws; `code` is stable across versions. */
export class SketchError extends Error {
  readonly code: string
  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = new.target.name
    this.code = code
  }
}

/** Two sketches whose cells do not mean the same thing (other width, depth or seed) cannot be merged. */
export class SketchMismatchError extends SketchError {
  constructor(message: string) {
    super('E_SKETCH_MISMATCH', message)
  }
}

/** A sketch, tracker or window option outside its allowed range. */
export class InvalidSketchOptionError extends SketchError {
  readonly option: string
  constructor(option: string, message: string) {
    super('E_INVALID_SKETCH_OPTION', `${option}: ${message}`)
    this.option = option
  }
}
