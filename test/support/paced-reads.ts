/**
 * Calls `read` `rps` times a second until the returned function is called. Paced by the clock, not by counting
 * timer ticks: on a busy machine a 10 ms interval fires late, and a fixed number of reads per tick would then fall
 * short of the rate a test asserts on (a key meant to be warming at 700/s measured below 500/s under CI load).
 */
export function pacedReads(rps: number, read: () => void): () => void {
  const start = performance.now()
  let sent = 0
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - start) * rps) / 1000)
    for (; sent < due; sent++) read()
  }, 10)
  return () => clearInterval(timer)
}
