import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  environmentProblems,
  envLogLevel,
  envNamespace,
  envPort,
  envRegistryKey,
  envText,
} from '../src/index.js'

const Environment = z.object({
  HOST: envText,
  PORT: envPort,
  HEATSINK_NAMESPACE: envNamespace,
  HEATSINK_REGISTRY_KEY: envRegistryKey,
  LOG_LEVEL: envLogLevel,
})

function problems(env: Record<string, string>): string[] {
  const result = Environment.safeParse(env)
  return result.success ? [] : environmentProblems(result.error)
}

describe('environment variables', () => {
  it('reads an empty or blank value as unset, and trims the rest', () => {
    expect(Environment.parse({ HOST: '  ', PORT: '', LOG_LEVEL: ' warn ' })).toEqual({
      HOST: undefined,
      PORT: undefined,
      HEATSINK_NAMESPACE: undefined,
      HEATSINK_REGISTRY_KEY: undefined,
      LOG_LEVEL: 'warn',
    })
    expect(Environment.parse({ PORT: ' 6380 ' }).PORT).toBe(6380)
  })

  it('names every bad variable with what it expected and what it got, but never a key', () => {
    const found = problems({
      PORT: '70000',
      HEATSINK_NAMESPACE: 'has space',
      HEATSINK_REGISTRY_KEY: 'short-secret',
      LOG_LEVEL: 'loud',
    })
    expect(found).toHaveLength(4)
    expect(found).toContain("PORT: expected an integer port from 0 to 65535, got '70000'")
    expect(found).toContain(
      "HEATSINK_NAMESPACE: expected 1 to 64 characters of A-Z, a-z, 0-9, '_', '.', ':' or '-', got 'has space'",
    )
    expect(found).toContain(
      "LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got 'loud'",
    )
    const keyProblem = found.find((line) => line.startsWith('HEATSINK_REGISTRY_KEY: '))
    expect(keyProblem).toBeDefined()
    expect(keyProblem).not.toContain('short-secret')
  })
})
