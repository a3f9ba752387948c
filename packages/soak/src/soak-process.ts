/** What every process of a soak reports besides its memory, summed over processes for the verdict. */
export interface ProcessCounters {
  /** Commands completed (agents, proxies). */
  readonly commands: number
  /** Commands that failed, error log lines, failed registry writes, dead-lettered reports: anything that went wrong. */
  readonly errors: number
  /** Reports delivered and dropped (agents). */
  readonly reportsSent: number
  readonly reportsDropped: number
  /** Commands not issued because too many were in flight: the process could not keep up with the rate. */
  readonly shed: number
}

/** The kinds of process a soak runs; proxies join once services/proxy exists. */
export type SoakRole = 'aggregator' | 'agent' | 'proxy'

/**
 * One process under soak. Roles differ in how they are started and asked for their heap and counters; the
 * sampler and the report treat them alike, so a new role is one more implementation of this.
 */
export interface SoakProcess {
  readonly name: string
  readonly role: SoakRole
  readonly pid: number
  /** False once the process exited on its own: the run fails. */
  readonly running: boolean
  /** V8's used heap, or null where the process cannot tell. */
  heapBytes(): Promise<number | null>
  counters(): Promise<ProcessCounters>
  /** Asks it to stop (SIGTERM) and waits, killing it after 10 s. */
  stop(): Promise<void>
}

export const NO_COUNTERS: ProcessCounters = {
  commands: 0,
  errors: 0,
  reportsSent: 0,
  reportsDropped: 0,
  shed: 0,
}
