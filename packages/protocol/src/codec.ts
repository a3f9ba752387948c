import type { z } from 'zod'
import { DetectionTuning } from './detection-tuning.js'
import { MalformedMessageError, WireVersionMismatchError } from './errors.js'
import { Invalidation } from './invalidation.js'
import { RegistryEvent, type RegistryEventInput } from './registry.js'
import { WindowReport, type WindowReportInput } from './report.js'
import { RegistrySnapshot, type RegistrySnapshotInput } from './snapshot.js'
import { WIRE_VERSION } from './version.js'

/** The one field of a stream entry that holds the encoded message. */
export const STREAM_FIELD = 'm'

/** Outcome of a `safeDecode*`: the message, or the error `decode*` would have thrown. */
export type DecodeResult<T> =
  | { ok: true; value: T }
  | { ok: false; error: MalformedMessageError | WireVersionMismatchError }

// Encoders take typed values and only stringify: they run on every agent's hot path, and the type checker
// has already done the validation a schema would repeat.

/** Encode a window report as JSON. */
export function encodeReport(report: WindowReportInput): string {
  return JSON.stringify(report)
}

/** Encode a registry event as JSON. */
export function encodeRegistryEvent(event: RegistryEventInput): string {
  return JSON.stringify(event)
}

/** Encode a registry snapshot as JSON. */
export function encodeSnapshot(snapshot: RegistrySnapshotInput): string {
  return JSON.stringify(snapshot)
}

/** Encode an invalidation as JSON. */
export function encodeInvalidation(invalidation: Invalidation): string {
  return JSON.stringify(invalidation)
}

/** Encode a detection tuning message as JSON. */
export function encodeTuning(tuning: DetectionTuning): string {
  return JSON.stringify(tuning)
}

/** Decode a detection tuning message without throwing. */
export function safeDecodeTuning(text: string): DecodeResult<DetectionTuning> {
  return decode(DetectionTuning, 'tuning', text)
}

/** Decode a window report; throws MalformedMessageError or WireVersionMismatchError. */
export function decodeReport(text: string): WindowReport {
  return unwrap(safeDecodeReport(text))
}

/** Decode a registry event; throws MalformedMessageError or WireVersionMismatchError. */
export function decodeRegistryEvent(text: string): RegistryEvent {
  return unwrap(safeDecodeRegistryEvent(text))
}

/** Decode a registry snapshot; throws MalformedMessageError or WireVersionMismatchError. */
export function decodeSnapshot(text: string): RegistrySnapshot {
  return unwrap(safeDecodeSnapshot(text))
}

/** Decode an invalidation; throws MalformedMessageError or WireVersionMismatchError. */
export function decodeInvalidation(text: string): Invalidation {
  return unwrap(safeDecodeInvalidation(text))
}

/** Decode a window report without throwing, for ingest paths that count and set aside bad messages. */
export function safeDecodeReport(text: string): DecodeResult<WindowReport> {
  return decode(WindowReport, 'report', text)
}

/** Decode a registry event without throwing. */
export function safeDecodeRegistryEvent(text: string): DecodeResult<RegistryEvent> {
  return decode(RegistryEvent, 'registry', text)
}

/** Decode a registry snapshot without throwing. */
export function safeDecodeSnapshot(text: string): DecodeResult<RegistrySnapshot> {
  return decode(RegistrySnapshot, 'snapshot', text)
}

/** Decode an invalidation without throwing. */
export function safeDecodeInvalidation(text: string): DecodeResult<Invalidation> {
  return decode(Invalidation, 'invalidate', text)
}

function unwrap<T>(result: DecodeResult<T>): T {
  if (result.ok) return result.value
  throw result.error
}

// The version is checked before the schema: a message from another wire version is reported as such,
// not as whichever field its schema happens to trip on first.
function decode<S extends z.ZodType>(schema: S, kind: string, text: string): DecodeResult<z.output<S>> {
  let message: unknown
  try {
    message = JSON.parse(text)
  } catch (cause) {
    return malformed('(json)', `malformed ${kind} message: not valid JSON`, cause)
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    return malformed('(root)', `malformed ${kind} message: expected a JSON object`)
  }

  const { v, kind: received } = message as { v?: unknown; kind?: unknown }
  if (v === undefined) {
    return malformed('v', `malformed ${kind} message: field "v" (wire version) is missing`)
  }
  if (typeof v !== 'number') {
    return malformed(
      'v',
      `malformed ${kind} message: field "v" (wire version) must be a number, received ${typeof v}`,
    )
  }
  if (v !== WIRE_VERSION) {
    return { ok: false, error: new WireVersionMismatchError(WIRE_VERSION, v) }
  }
  if (received !== kind) {
    return malformed(
      'kind',
      `malformed ${kind} message: field "kind" must be "${kind}", received ${describe(received)}`,
    )
  }

  const result = schema.safeParse(message)
  if (result.success) return { ok: true, value: result.data }
  const issue = result.error.issues[0]
  const field = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)'
  return malformed(
    field,
    `malformed ${kind} message: field "${field}": ${issue?.message ?? 'invalid'}`,
    result.error,
  )
}

function malformed(field: string, message: string, cause?: unknown): DecodeResult<never> {
  return {
    ok: false,
    error: new MalformedMessageError(field, message, cause === undefined ? undefined : { cause }),
  }
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : value === undefined ? 'nothing' : typeof value
}
