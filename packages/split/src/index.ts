export type { BaseShape } from './base-shape.js'
export type { SplitSettings, SplitterOptions } from './context.js'
export type { CopyExpiry } from './copies.js'
export {
  FoldTimeoutError,
  InvalidSplitFactorError,
  InvalidSplitOptionError,
  LeaseLostError,
  NotAnIntegerError,
  ShardTypeError,
  SplitError,
  SplitScriptError,
} from './errors.js'
export type { GateState } from './gate.js'
export { computeLayout, type SplitLayout, type SplitShard, shardSlot } from './layout.js'
export { type ShardPlacement, shardPlacement } from './placement.js'
export {
  type ReconcileReport,
  Reconciler,
  type ReconcilerOptions,
  type SplitKeyRef,
} from './reconciler.js'
export type { ActivateOptions, ReshardReport } from './reshard.js'
export { assertSplitFactor, isSplitFactor, type SplitFactorOptions, splitFactorFor } from './split-factor.js'
export { createSplitter, Splitter } from './splitter.js'
