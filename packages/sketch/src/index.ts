export type { Candidate } from './candidate.js'
export { type Clock, ManualClock, systemClock } from './clock.js'
export {
  CountMinSketch,
  type CountMinSketchOptions,
  DEFAULT_DEPTH,
  DEFAULT_SEED,
  DEFAULT_WIDTH,
} from './count-min-sketch.js'
export { type ErrorSample, type SampledKey, summariseErrors } from './error-sample.js'
export { InvalidSketchOptionError, SketchError, SketchMismatchError } from './errors.js'
export { fmix32 } from './hash.js'
export { type FrequencyCounter, SlidingFrequency } from './sliding-frequency.js'
export { DEFAULT_WINDOW_MS, TumblingWindows, type TumblingWindowsOptions } from './tumbling-windows.js'
export {
  DEFAULT_REPORT_FLOOR,
  DEFAULT_TOP_K,
  type HeavyHitter,
  WindowRecorder,
  type WindowRecorderOptions,
  type WindowSummary,
} from './window-recorder.js'
