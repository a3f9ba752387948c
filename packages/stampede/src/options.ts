import { InvalidStampedeOptionError } from './errors.js'
import { DEFAULT_JITTER } from './jitter.js'

/** A value a caller may serve when maxWaitMs passes, e.g. the agent's expired L1 entry. */
export interface StaleValue<T> {
  readonly value: T
}

/** Options of one getOrLoad call; the first caller's options govern a flight that others join. */
export interface GetOrLoadOptions<T> {
  /** How long a loaded value is fresh. */
  ttlSeconds: number
  /** How long past its TTL a value is still served (at once, while one refresh runs). Default 0. */
  staleSeconds?: number
  /** How long a loader's "not found" (undefined or null) is cached; 0 caches nothing. Default min(ttlSeconds, 60). */
  negativeTtlSeconds?: number
  /** The longest this caller waits for a load; then `fallback`, or LoadTimeoutError. Default: the guard's. */
  maxWaitMs?: number
  /** Coordinate loads across agents through the Redis lease. Default true. */
  lock?: boolean
  /** XFetch aggressiveness: 1 is the paper's optimum, 0 disables early refresh. Default 1. */
  xfetchBeta?: number
  /** Spread of every TTL written, as a fraction (0.1 is ±10%); 0 disables. Default 0.1. */
  jitter?: number
  /** Consulted only when maxWaitMs passes: a stale value to serve instead of failing. */
  fallback?: () => StaleValue<T> | undefined
  /**
   * Lets this caller leave early: when it fires, the call rejects at once with its reason. The load goes on for
   * the other callers; when none is left, the loader's own signal (LoadContext.signal) fires too.
   */
  signal?: AbortSignal
}

/** GetOrLoadOptions with defaults applied and times in ms. */
export interface ResolvedLoadOptions {
  ttlMs: number
  staleMs: number
  negativeTtlMs: number
  maxWaitMs: number
  lock: boolean
  xfetchBeta: number
  jitter: number
}

const MAX_NEGATIVE_TTL_SECONDS = 60

/** Validates and completes a call's options; throws InvalidStampedeOptionError. */
export function resolveLoadOptions<T>(
  options: GetOrLoadOptions<T>,
  defaultMaxWaitMs: number,
): ResolvedLoadOptions {
  const ttlSeconds = positive('ttlSeconds', options.ttlSeconds)
  return {
    ttlMs: ttlSeconds * 1000,
    staleMs: nonNegative('staleSeconds', options.staleSeconds ?? 0) * 1000,
    negativeTtlMs:
      nonNegative(
        'negativeTtlSeconds',
        options.negativeTtlSeconds ?? Math.min(ttlSeconds, MAX_NEGATIVE_TTL_SECONDS),
      ) * 1000,
    maxWaitMs: positive('maxWaitMs', options.maxWaitMs ?? defaultMaxWaitMs),
    lock: options.lock ?? true,
    xfetchBeta: nonNegative('xfetchBeta', options.xfetchBeta ?? 1),
    jitter: fraction('jitter', options.jitter ?? DEFAULT_JITTER),
  }
}

/** Checks a guard option that must be a finite number above zero. */
export function positive(option: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new InvalidStampedeOptionError(option, `expected a finite number above 0, received ${value}`)
  }
  return value
}

function nonNegative(option: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) {
    throw new InvalidStampedeOptionError(option, `expected a finite number of at least 0, received ${value}`)
  }
  return value
}

function fraction(option: string, value: number): number {
  if (!Number.isFinite(value) || value < 0 || value >= 1) {
    throw new InvalidStampedeOptionError(
      option,
      `expected a number from 0 up to (not including) 1, received ${value}`,
    )
  }
  return value
}
