import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { keyIndexes, lookupCommand } from '@heatsink/commands'

/** Most keys promoted for one unit: its loops and fuzzers name far fewer literal keys than this. */
export const MAX_UNIT_KEYS = 200

// A command on a client in Tcl: `r set foo bar`, `[r get foo]`, `$rd blpop mylist 0`, `$r2 sadd myset a`.
const CLIENT_COMMAND = /(?:^|[\s[{])(?:r|\$r\w*)\s+([a-zA-Z][a-zA-Z.]*)\s+([^\]\n;]*)/gm
const LITERAL_KEY = /^[A-Za-z0-9_:.{}-]{1,64}$/
// Files a unit sources besides its own.
const SOURCED: Readonly<Record<string, readonly string[]>> = { 'unit/type/list': ['unit/type/list-common'] }

/**
 * The keys a unit names literally in its source, most used first: what the promoted mode registers
 * `local_cache` before the unit runs. Arguments are placed by the command table, so only key positions count;
 * keys built at run time (`$key`, `[...]`) are left out.
 */
export function unitKeys(suiteDir: string, unit: string): string[] {
  const counts = new Map<string, number>()
  for (const file of [unit, ...(SOURCED[unit] ?? [])]) {
    const source = readFileSync(join(suiteDir, 'tests', `${file}.tcl`), 'utf8')
    for (const [, command = '', rest = ''] of source.matchAll(CLIENT_COMMAND)) {
      const spec = lookupCommand(command)
      if (spec === undefined) continue
      const args = rest.trim().split(/\s+/).map(unquote)
      for (const index of keyIndexes(spec, args)) {
        const key = args[index]
        if (key !== undefined && LITERAL_KEY.test(key)) counts.set(key, (counts.get(key) ?? 0) + 1)
      }
    }
  }
  return [...counts.entries()]
    .sort(([a, countA], [b, countB]) => countB - countA || a.localeCompare(b))
    .slice(0, MAX_UNIT_KEYS)
    .map(([key]) => key)
}

// Tcl braces and quotes around a word are not part of the key, nor is the brace closing the script around it
// (`{r incr novar}`); a key's own hash tag (`x{t}`) is.
function unquote(word: string): string {
  let key = /^\{.*\}$|^".*"$/.test(word) ? word.slice(1, -1) : word
  while (key.endsWith('}') && count(key, '}') > count(key, '{')) key = key.slice(0, -1)
  return key
}

function count(text: string, char: string): number {
  return text.split(char).length - 1
}
