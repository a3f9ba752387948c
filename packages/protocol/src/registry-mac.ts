import { createHmac, timingSafeEqual } from 'node:crypto'

/*
 * Authentication of what the control plane publishes (registry events and snapshots). Anyone allowed to
 * PUBLISH on the registry channel could otherwise push a well-formed event with the next version: agents would
 * apply it and then drop the real one as a duplicate. With a key shared by aggregators and agents, each message
 * carries `mac`, an HMAC-SHA-256 over a canonical encoding of the rest of the message, and agents apply only
 * messages whose MAC checks. The field is optional in the schemas, so unsigned deployments keep working.
 */

/** Shortest registry key accepted: 32 characters, about the strength of the 256-bit hash behind the MAC. */
export const MIN_REGISTRY_KEY_LENGTH = 32

// Versioned and specific to this use, so a MAC made with the same key for anything else never verifies here.
const DOMAIN = 'heatsink registry mac v1\n'

/** Why `key` cannot serve as a registry key (never quoting it), or undefined when it can. */
export function registryKeyProblem(key: unknown): string | undefined {
  if (typeof key !== 'string') return `expected a string, got ${typeof key}`
  // Printable ASCII only: the key travels through environment variables, YAML and Secrets, where whitespace
  // or other characters are easily changed on the way and would make every MAC fail.
  if (!/^[\x21-\x7e]*$/.test(key)) return 'expected printable ASCII without spaces'
  if (key.length < MIN_REGISTRY_KEY_LENGTH) {
    return `expected at least ${MIN_REGISTRY_KEY_LENGTH} characters, got ${key.length}`
  }
  return undefined
}

/**
 * JSON with the keys of every object sorted, so the MAC depends on the message's content and not on the field
 * order an encoder (or another language) happened to use.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>
    const fields = Object.keys(record)
      .filter((name) => record[name] !== undefined)
      .sort()
      .map((name) => `${JSON.stringify(name)}:${canonicalJson(record[name])}`)
    return `{${fields.join(',')}}`
  }
  return JSON.stringify(value)
}

/** The MAC of a parsed message: over everything but its own `mac` field. */
function macOf(message: Record<string, unknown>, key: string): string {
  const { mac: _ignored, ...rest } = message
  return createHmac('sha256', key).update(DOMAIN).update(canonicalJson(rest)).digest('base64url')
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text)
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      return value as Record<string, unknown>
    }
  } catch {
    // Not JSON: nothing to sign or verify; decoding reports it.
  }
  return undefined
}

/**
 * Adds `mac` to an encoded registry event or snapshot (replacing any it had). Takes the encoded text because
 * the aggregator publishes events as stored in its outbox. Throws on text that is not a JSON object.
 */
export function signRegistryMessage(text: string, key: string): string {
  const message = parseObject(text)
  if (message === undefined) throw new TypeError('a registry message to sign must be a JSON object')
  const { mac: _old, ...rest } = message
  return JSON.stringify({ ...rest, mac: macOf(rest, key) })
}

/** Whether an encoded registry event or snapshot carries a valid `mac` for `key`; unsigned ones do not. */
export function verifyRegistryMessage(text: string, key: string): boolean {
  const message = parseObject(text)
  if (message === undefined || typeof message.mac !== 'string') return false
  const given = Buffer.from(message.mac, 'utf8')
  const expected = Buffer.from(macOf(message, key), 'utf8')
  // timingSafeEqual needs equal lengths; a length difference reveals nothing about the key.
  return given.length === expected.length && timingSafeEqual(given, expected)
}
