import { nearestName } from './options/nearest-name.js'

/** Base of every error this package throws; `code` is stable across versions. */
export class AgentError extends Error {
  readonly code: string
  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = new.target.name
    this.code = code
  }
}

/** An agent option outside its allowed range; `option` is its dotted name (`l1.maxEntries`). */
export class InvalidAgentOptionError extends AgentError {
  readonly option: string
  constructor(
    option: string,
    problem: string,
    code = 'E_INVALID_AGENT_OPTION',
    message = `${option}: ${problem}`,
  ) {
    super(code, message)
    this.option = option
  }
}

/**
 * An option the agent does not know, most likely misspelt: `option` is its full path (`heatsink.l1.maxEntrys`),
 * `suggestion` the valid name nearest to it (`maxEntries`), if any is near.
 */
export class UnknownAgentOptionError extends InvalidAgentOptionError {
  readonly suggestion: string | undefined

  constructor(option: string, name: string, validNames: readonly string[]) {
    const suggestion = nearestName(name, validNames)
    const hint =
      suggestion === undefined
        ? `the options here are ${validNames.join(', ')}`
        : `did you mean ${suggestion}?`
    super(option, 'unknown option', 'E_UNKNOWN_AGENT_OPTION', `unknown option ${option} — ${hint}`)
    this.suggestion = suggestion
  }
}

/** ready() gave up: the registry was not loaded or the subscriptions were not live within `timeoutMs`. */
export class AgentNotReadyError extends AgentError {
  readonly timeoutMs: number
  constructor(timeoutMs: number, waitingFor: string, cause?: unknown) {
    super(
      'E_AGENT_NOT_READY',
      `agent not ready after ${timeoutMs} ms: ${waitingFor}; is Redis reachable?` +
        (cause instanceof Error ? ` (last error: ${cause.message})` : ''),
      cause === undefined ? undefined : { cause },
    )
    this.timeoutMs = timeoutMs
  }
}

/** ready() or getOrLoad() was called on, or interrupted by, an agent that has been closed. */
export class AgentClosedError extends AgentError {
  constructor(options?: ErrorOptions) {
    super('E_AGENT_CLOSED', 'the agent has been closed', options)
  }
}

/**
 * An L1 fill given up before its reply came: its tracking connection was lost, or no reply came within
 * `l1.fillTimeoutMs`. Never seen by callers: the reads that waited on the fill go to Redis as without Heatsink.
 */
export class FillAbandonedError extends AgentError {
  readonly key: string
  constructor(key: string, reason: string) {
    super('E_FILL_ABANDONED', `L1 fill of ${JSON.stringify(key)} abandoned: ${reason}`)
    this.key = key
  }
}
