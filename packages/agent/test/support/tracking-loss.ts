import { setTimeout as delay } from 'node:timers/promises'
import type { Redis } from 'ioredis'

/** The server's client id of the agent's tracking connection (named `heatsink:track:<agent id>`). */
export async function trackingClientId(admin: Redis): Promise<number> {
  const list = (await admin.client('LIST')) as string
  const lines = list.split('\n').filter((line) => line.includes(' name=heatsink:track:'))
  if (lines.length !== 1) throw new Error(`expected one tracking connection, found ${lines.length}`)
  return Number(/^id=(\d+)/.exec(lines[0] as string)?.[1])
}

/**
 * Kills the tracking connection `trackId` while the reads `start` makes wait on an L1 fill sent on it. The server
 * is paused first (CLIENT PAUSE ALL), so the fill and the CLIENT KILL sent after it both wait; when the pause
 * ends Redis runs them in that order before it writes any reply, and the fill's reply dies with the connection.
 * Resolves once the kill is answered, with the reads and the time (performance.now()) of that answer.
 */
export async function killTrackingDuringFill<T>(
  admin: Redis,
  trackId: number,
  start: () => Array<Promise<T>>,
  pauseMs = 300,
): Promise<{ reads: Array<Promise<T>>; killedAt: number }> {
  await admin.client('PAUSE', pauseMs, 'ALL')
  const reads = start()
  // Every read already asked by now (a read waits for nothing before its fill is written); one turn of the event
  // loop more lets the fill's bytes leave before the kill's.
  await delay(1)
  const killed = await admin.client('KILL', 'ID', trackId)
  if (killed !== 1) throw new Error(`CLIENT KILL ID ${trackId} killed ${killed} connections`)
  return { reads, killedAt: performance.now() }
}

/**
 * Each read's outcome and when the last settled (ms after `since`, a performance.now() time), or a failure naming
 * how many were still unsettled `boundMs` after `since`.
 */
export async function settledWithin<T>(
  reads: Array<Promise<T>>,
  since: number,
  boundMs: number,
): Promise<{ outcomes: PromiseSettledResult<T>[]; lastMs: number }> {
  let settled = 0
  let last = since
  const all = Promise.allSettled(
    reads.map((read) =>
      read.finally(() => {
        settled++
        last = performance.now()
      }),
    ),
  )
  const left = Math.max(0, since + boundMs - performance.now())
  const timer = new AbortController()
  const outcome = await Promise.race([
    all,
    delay(left, 'timeout' as const, { signal: timer.signal }).catch(() => 'aborted' as const),
  ])
  timer.abort()
  if (outcome === 'timeout' || outcome === 'aborted') {
    throw new Error(`${reads.length - settled} of ${reads.length} reads unsettled after ${boundMs} ms`)
  }
  return { outcomes: outcome, lastMs: last - since }
}
