import type { LiveFrame, LiveState, RatePoint } from '@heatsink/protocol'

/** How the page's connection to GET /live stands. */
export type ConnectionStatus = 'connecting' | 'live' | 'reconnecting'

/** What the page shows: every point received (newest last), the latest state, and whether it is live. */
export interface LiveView {
  points: RatePoint[]
  state: LiveState | null
  problem: string | null
  status: ConnectionStatus
}

// Half an hour of 1 s windows: enough for the chart's "last minutes" with room to scroll back.
const KEEP_POINTS = 1800
const RETRY_MS = 2000

/**
 * Follows GET /live. EventSource reconnects by itself after a dropped connection and sends the id of the last
 * message as Last-Event-ID, so the replica sends only the points missed meanwhile. When the browser gives up (the
 * replica answered an error, or went away for good) a new EventSource resumes with `?after=<last point>`.
 */
export function connectLive(onChange: (view: LiveView) => void): () => void {
  const view: LiveView = { points: [], state: null, problem: null, status: 'connecting' }
  let source: EventSource | undefined
  let retry: ReturnType<typeof setTimeout> | undefined
  let closed = false

  const publish = () => onChange({ ...view })
  const open = () => {
    const last = view.points.at(-1)?.windowStart
    source = new EventSource(last === undefined ? 'live' : `live?after=${last}`)
    source.addEventListener('frame', (message) => {
      const frame = JSON.parse((message as MessageEvent<string>).data) as LiveFrame
      merge(view.points, frame.points)
      if (frame.state !== null) view.state = frame.state
      view.problem = frame.problem
      view.status = 'live'
      publish()
    })
    source.addEventListener('error', () => {
      view.status = 'reconnecting'
      publish()
      if (source?.readyState !== EventSource.CLOSED || closed) return
      retry = setTimeout(open, RETRY_MS)
    })
  }
  open()
  return () => {
    closed = true
    clearTimeout(retry)
    source?.close()
  }
}

// Points arrive in order, but a resumed stream may repeat the last one: keep one point per window.
function merge(points: RatePoint[], incoming: readonly RatePoint[]): void {
  for (const point of incoming) {
    const last = points.at(-1)
    if (last !== undefined && point.windowStart <= last.windowStart) continue
    points.push(point)
  }
  if (points.length > KEEP_POINTS) points.splice(0, points.length - KEEP_POINTS)
}
