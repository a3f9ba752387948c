// Reads missed while the machine stalled are made up for at most this far back: a rate kept without any limit
// turns a long stall into a burst, which can lift a key a test keeps below the hot threshold above it.
const MAX_CATCH_UP_MS = 250
// And they are made up gradually: no stretch of time gets more than this many times the rate. An agent measures
// a surging key's rate over a tenth of a second, so 250 ms of reads made up at once after a stall read as a rate
// of three times the paced one (a key warming at 600/s was promoted against a threshold of 1,000 in CI).
const MAX_RATE_FACTOR = 1.25
// Ticks further apart than this were a stall: the reads it missed are made up over the ticks after it.
const LONGEST_TICK_MS = 20

/**
 * Calls `read` `rps` times a second until the returned function is called. Paced by the clock, not by counting
 * timer ticks: on a busy machine a 10 ms interval fires late, and a fixed number of reads per tick would then fall
 * short of the rate a test asserts on (a key meant to be warming at 700/s measured below 500/s under CI load).
 * So no stretch of time gets more than rps x 1.25 reads a second.
 */
export function pacedReads(rps: number, read: () => void): () => void {
  const start = performance.now()
  const maxBehind = Math.ceil((rps * MAX_CATCH_UP_MS) / 1000)
  let sent = 0
  let lastTick = start
  // Reads the rate cap allows now; kept as a fraction, so that a low rate is capped as exactly as a high one.
  let allowance = 0
  const maxAllowance = Math.max(1, (LONGEST_TICK_MS * rps * MAX_RATE_FACTOR) / 1000)
  const timer = setInterval(() => {
    const now = performance.now()
    const due = Math.floor(((now - start) * rps) / 1000)
    const earned = (Math.min(now - lastTick, LONGEST_TICK_MS) * rps * MAX_RATE_FACTOR) / 1000
    allowance = Math.min(allowance + earned, maxAllowance)
    lastTick = now
    sent = Math.max(sent, due - maxBehind)
    for (; sent < due && allowance >= 1; sent++, allowance--) read()
  }, 10)
  return () => clearInterval(timer)
}
