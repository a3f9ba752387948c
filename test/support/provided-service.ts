/** A Redis or Postgres the global setup hands to the tests. */
export interface ProvidedService {
  readonly url: string
  /** Where it came from, for the setup's log line. */
  readonly source: string
  /** Ends it if the setup started it; a no-op otherwise. */
  stop(): Promise<void>
}
