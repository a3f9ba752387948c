import type { LiveState, RatePoint } from '@heatsink/protocol'
import { type ChartSeries, RateChart } from './rate-chart.js'

// Lines are told apart by colour; past eight keys a chart stops being readable, so the busiest eight are drawn.
const PALETTE = ['#d9480f', '#1c7ed6', '#2f9e44', '#ae3ec9', '#f08c00', '#0c8599', '#c2255c', '#5c940d']
const MAX_LINES = 8
// The chart covers the last few minutes; older points stay in memory for when the page gets a history view.
const CHART_POINTS = 300

interface RateChartsProps {
  points: RatePoint[]
  state: LiveState
}

/** Cluster-wide req/s of hot and warming keys with both thresholds, and the reads the agents' L1 absorbed. */
export function RateCharts({ points, state }: RateChartsProps) {
  const shown = points.slice(-CHART_POINTS)
  const times = shown.map((p) => p.windowStart / 1000)
  const hot = busiest(shown, 'hot')
  const warming = busiest(shown, 'warming').filter((key) => !hot.includes(key))
  const lines: ChartSeries[] = [
    ...hot.map((key, i) => ({
      label: key,
      color: PALETTE[i % PALETTE.length] as string,
      values: shown.map((p) => p.hot[key] ?? p.warming[key] ?? null),
    })),
    ...warming.slice(0, Math.max(0, MAX_LINES - hot.length)).map((key, i) => ({
      label: `${key} (warming)`,
      color: PALETTE[(hot.length + i) % PALETTE.length] as string,
      dashed: true,
      values: shown.map((p) => p.warming[key] ?? p.hot[key] ?? null),
    })),
    { label: 'hot threshold', color: '#e03131', dashed: true, values: shown.map(() => state.hotRps) },
    { label: 'cool threshold', color: '#868e96', dashed: true, values: shown.map(() => state.coolRps) },
  ]
  const absorbed: ChartSeries[] = [
    {
      label: 'reads answered without Redis (L1 hits, coalesced)',
      color: '#2f9e44',
      values: shown.map((p) => p.absorbedReadsPerSecond),
    },
  ]
  return (
    <section class="charts">
      <RateChart title="Cluster-wide requests per second" times={times} series={lines} testId="rate-chart" />
      <RateChart
        title="Redis reads absorbed (per second)"
        times={times}
        series={absorbed}
        testId="absorbed-chart"
      />
    </section>
  )
}

// Keys of one kind, highest peak rate over the shown points first.
function busiest(points: readonly RatePoint[], kind: 'hot' | 'warming'): string[] {
  const peak = new Map<string, number>()
  for (const point of points) {
    for (const [key, value] of Object.entries(point[kind])) peak.set(key, Math.max(peak.get(key) ?? 0, value))
  }
  return [...peak.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, MAX_LINES)
    .map(([key]) => key)
}
