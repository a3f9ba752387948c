/** Base of every error this package throws; `code` is stable across versions. */
export class RedisScriptError extends Error {
  readonly code: string

  constructor(code: string, message: string) {
    super(message)
    this.name = new.target.name
    this.code = code
  }
}

/** A script file's name does not say what the script is called and how many keys it takes. */
export class ScriptFileNameError extends RedisScriptError {
  constructor(file: string) {
    super(
      'SCRIPT_FILE_NAME',
      `${file}: a script file is named <camelName>-<numberOfKeys>.lua, or <camelName>.lua for any number of keys`,
    )
  }
}

/** A script was given a number of keys other than the one it declares. */
export class ScriptKeyCountError extends RedisScriptError {
  constructor(script: string, expected: number, given: number) {
    super('SCRIPT_KEY_COUNT', `script ${script} takes ${expected} keys, was given ${given}`)
  }
}
