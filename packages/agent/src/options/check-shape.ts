import { z } from 'zod'
import { InvalidAgentOptionError, UnknownAgentOptionError } from '../errors.js'

type Issue = z.core.$ZodIssue

/**
 * Checks `value` against `schema` and throws for the first problem, naming its full path from `at` (`heatsink`
 * for the front door's options): an unknown key first, with the nearest valid name, since a misspelt option
 * explains the other problems more often than not; else a wrong type, with what was given.
 */
export function checkShape(schema: z.ZodType, value: unknown, at: string): void {
  const result = schema.safeParse(value, { reportInput: true })
  if (result.success) return
  const issues = [...result.error.issues].sort((a, b) => rank(a) - rank(b))
  const issue = issues[0] as Issue
  const path = joinPath(at, issue.path)
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] as string
    throw new UnknownAgentOptionError(joinPath(path, [key]), key, namesAt(schema, issue.path))
  }
  throw new InvalidAgentOptionError(path === '' ? 'options' : path, describeIssue(issue))
}

function rank(issue: Issue): number {
  return issue.code === 'unrecognized_keys' ? 0 : 1
}

function joinPath(at: string, path: readonly PropertyKey[]): string {
  return [at, ...path.map(String)].filter((part) => part !== '').join('.')
}

// The option names the schema accepts at `path` (every object on it is a strict object, optional or not).
function namesAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let at: unknown = schema
  for (const part of [...path, undefined]) {
    while (at instanceof z.ZodOptional) at = at.unwrap()
    if (!(at instanceof z.ZodObject)) return []
    if (part === undefined) return Object.keys(at.shape)
    at = at.shape[String(part)]
  }
  return []
}

function describeIssue(issue: Issue): string {
  if (issue.code !== 'invalid_type') return issue.message
  const expected = issue.expected === 'object' ? 'an object' : `a ${issue.expected}`
  return `must be ${expected}, got ${describeValue(issue.input)}`
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (value === null || typeof value !== 'object') return String(value)
  return Array.isArray(value) ? 'an array' : 'an object'
}
