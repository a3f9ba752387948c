/** Where the aggregator reads the time; injectable so expiry and latency tests are exact instead of sleeping. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() }
