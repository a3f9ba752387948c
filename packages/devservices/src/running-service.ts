/** A server that ensureRedis or ensurePostgres found or started. */
export interface RunningService {
  /** Where to connect. */
  readonly url: string
  /** True when this call started a private server; only then does stop() end anything. */
  readonly started: boolean
  /** Ends the private server and removes its files; a no-op for a server that was already there. */
  stop(): Promise<void>
}

/** Receives one short line per decision (which server is used, what was started). */
export type ServiceLog = (message: string) => void

/** Options shared by ensureRedis and ensurePostgres. */
export interface EnsureServiceOptions {
  /** Where to look first; each function documents its default. */
  readonly url?: string
  readonly log?: ServiceLog
  /** Directories searched for the server binaries, replacing the defaults (PATH; for Postgres also /usr/lib/postgresql/N/bin). */
  readonly binDirs?: readonly string[]
  /** How long a private server may take to answer; default 30 s. */
  readonly startTimeoutMs?: number
}
