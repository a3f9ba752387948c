// Reads missed while the machine stalled are made up for at most this far back: a rate kept without any limit
// turns a long stall into a burst, which can lift a key a test keeps below the hot threshold above it.
const MAX_CATCH_UP_MS = 250

/**
 * Calls `read` `rps` times a second until the returned function is called. Paced by the clock, not by counting
 * timer ticks: on a busy machine a 10 ms interval fires late, and a fixed number of reads per tick would then fall
 * short of the rate a test asserts on (a key meant to be warming at 700/s measured below 500/s under CI load).
 * So no second gets more than rps x 1.25 reads.
 */
export function pacedReads(rps: number, read: () => void): () => void {
  const start = performance.now()
  const maxBehind = Math.ceil((rps * MAX_CATCH_UP_MS) / 1000)
  let sent = 0
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - start) * rps) / 1000)
    sent = Math.max(sent, due - maxBehind)
    for (; sent < due; sent++) read()
  }, 10)
  return () => clearInterval(timer)
}
