import { TumblingWindows, WindowRecorder, type WindowSummary } from '@heatsink/sketch'
import { Traffic } from './traffic.js'

// Until the aggregator and agents exist, the quickstart shows the detection core on its own: one process's
// sketch watching live synthetic traffic, and the second in which a key that goes viral is detected.
const HOT_RPS = 20_000
const WINDOW_MS = 1000
const SLICE_MS = 10
const VIRAL_KEY = 'post:viral-42'
const VIRAL_AFTER_MS = 4_000

const seconds = Number(
  process.argv.find((a) => a.startsWith('--seconds='))?.split('=')[1] ?? Number.POSITIVE_INFINITY,
)
const traffic = new Traffic({
  backgroundRps: 100_000,
  viralRps: 30_000,
  viralKey: VIRAL_KEY,
  viralAfterMs: VIRAL_AFTER_MS,
})
const started = Date.now()
let detectedAt: number | undefined

const recorder = new WindowRecorder({
  reportFloor: HOT_RPS,
  // The fast path: a key is flagged on the request that takes it over the threshold, not at window end.
  onFloorCrossed: (key) => {
    if (key === VIRAL_KEY && detectedAt === undefined) {
      detectedAt = Date.now()
      const onset = started + VIRAL_AFTER_MS
      console.log(`\n>>> ${key} detected hot ${detectedAt - onset} ms after it went viral (fast path)\n`)
    }
  },
})

const windows = new TumblingWindows(recorder, { windowMs: WINDOW_MS, onWindow: printWindow })

function printWindow(summary: WindowSummary): void {
  const time = new Date(summary.windowStart).toISOString().slice(11, 19)
  const hot = summary.hitters.filter((h) => (h.count * 1000) / summary.windowMs >= HOT_RPS)
  const top = summary.hitters
    .slice(0, 3)
    .map((h) => `${h.key}=${h.count}`)
    .join('  ')
  console.log(
    `[${time}] ${summary.total.toLocaleString()} requests | top: ${top} | hot (>= ${HOT_RPS}/s): ${hot.map((h) => h.key).join(', ') || 'none'}`,
  )
}

console.log(
  `Heatsink quickstart: a Count-Min Sketch (4x2048) watching ${(100_000).toLocaleString()} requests/s`,
)
console.log(
  `of Zipf traffic over 100,000 keys; ${VIRAL_KEY} goes viral after ${VIRAL_AFTER_MS / 1000} s. Ctrl-C stops.\n`,
)
windows.start()

let elapsed = 0
const driver = setInterval(() => {
  elapsed += SLICE_MS
  traffic.slice(elapsed, SLICE_MS, (key) => recorder.record(key))
  if (elapsed >= seconds * 1000) stop()
}, SLICE_MS)

function stop(): void {
  clearInterval(driver)
  windows.stop({ flush: true })
  if (detectedAt === undefined) console.log(`${VIRAL_KEY} was not detected`)
  process.exit(detectedAt === undefined && seconds * 1000 > VIRAL_AFTER_MS + WINDOW_MS ? 1 : 0)
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
