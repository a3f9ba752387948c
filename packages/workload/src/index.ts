export { type Random, seededRandom } from './random.js'
export { exactCounts, keyNames, type StreamOptions, shuffle, uniformStream, zipfStream } from './streams.js'
export { ZipfSampler } from './zipf.js'
