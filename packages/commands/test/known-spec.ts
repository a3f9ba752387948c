import type { CommandSpec } from '../src/index.js'
import { lookupCommand } from '../src/index.js'

/** The spec of a command the table must know (a test's typo fails loudly rather than reading undefined). */
export function spec(name: string): CommandSpec {
  const found = lookupCommand(name)
  if (found === undefined) throw new Error(`unknown command ${name}`)
  return found
}
