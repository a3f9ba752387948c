export { type Codec, jsonCodec } from './codec.js'
export { decodeEnvelope, type Envelope, type EnvelopeKind, encodeEnvelope, unwrapStored } from './envelope.js'
export { GuardClosedError, InvalidStampedeOptionError, LoadTimeoutError, StampedeError } from './errors.js'
export { fillChannel } from './fill-channel.js'
export { Generations } from './generations.js'
export { DEFAULT_JITTER, jitterFactor } from './jitter.js'
export type { KeyStats } from './key-stats.js'
export type { ContextLoader, LoadContext } from './load-context.js'
export type { GetOrLoadOptions, StaleValue } from './options.js'
export { coalesceReads, ReadCoalescer } from './read-coalescer.js'
export {
  createStampedeGuard,
  type Fetched,
  type FetchSource,
  type GuardErrorContext,
  StampedeGuard,
  type StampedeGuardOptions,
} from './stampede-guard.js'
export { delAndBreakLease, delAndBreakLeases, type SetArguments, setAndBreakLease } from './write-through.js'
export { shouldRefreshEarly } from './xfetch.js'
