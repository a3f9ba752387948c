import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'

/** One line of a chart. */
export interface ChartSeries {
  label: string
  values: Array<number | null>
  color: string
  /** Dashed: warming keys and thresholds. */
  dashed?: boolean
}

interface RateChartProps {
  title: string
  /** Seconds since the epoch, one per point. */
  times: number[]
  series: ChartSeries[]
  /** For tests: the chart's container carries it, with how many points it holds and the first and last time. */
  testId: string
}

const HEIGHT = 240

/**
 * A uPlot line chart that follows its container's width. The plot is rebuilt only when the set of lines
 * changes (a key turns hot or cools down); otherwise each frame only replaces the data.
 */
export function RateChart({ title, times, series, testId }: RateChartProps) {
  const container = useRef<HTMLDivElement>(null)
  const plot = useRef<uPlot | null>(null)
  const shape = series.map((s) => `${s.label}|${s.color}|${s.dashed === true}`).join('\n')

  useEffect(() => {
    const element = container.current
    if (element === null) return
    const options: uPlot.Options = {
      width: Math.max(200, element.clientWidth),
      height: HEIGHT,
      series: [
        {},
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 2,
          ...(s.dashed === true ? { dash: [6, 4] } : {}),
          value: (_u: uPlot, v: number | null) => (v === null ? '–' : Math.round(v).toLocaleString('en')),
        })),
      ],
      axes: [{}, { size: 60, values: (_u, ticks) => ticks.map((t) => compact(t)) }],
      legend: { live: false },
    }
    plot.current = new uPlot(options, [times, ...series.map((s) => s.values)], element)
    const resize = new ResizeObserver(() =>
      plot.current?.setSize({ width: Math.max(200, element.clientWidth), height: HEIGHT }),
    )
    resize.observe(element)
    return () => {
      resize.disconnect()
      plot.current?.destroy()
      plot.current = null
    }
    // Rebuilt for a new set of lines only (`shape`); data changes go through setData below.
  }, [shape])

  useEffect(() => {
    plot.current?.setData([times, ...series.map((s) => s.values)])
  })

  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div
        ref={container}
        data-testid={testId}
        data-points={times.length}
        data-first={times[0]}
        data-last={times.at(-1)}
      />
    </figure>
  )
}

function compact(value: number): string {
  if (Math.abs(value) >= 1_000_000) return `${(value / 1_000_000).toFixed(1)}M`
  if (Math.abs(value) >= 1000) return `${(value / 1000).toFixed(value % 1000 === 0 ? 0 : 1)}k`
  return String(value)
}
