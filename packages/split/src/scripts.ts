import { RedisScript } from '@heatsink/redis-script'

// Every script this package runs, by file name (`<camelName>-<numberOfKeys>.lua`).
const SCRIPT_KEYS = {
  incrShard: 2,
  saddShard: 2,
  zaddShard: 2,
  remShard: 2,
  setCopy: 2,
  setBase: 2,
  sealShard: 2,
  finishShard: 2,
  reopenShard: 1,
  clearMoved: 1,
  applyCounterMove: 2,
  mergeMembers: 3,
  baseWrite: 3,
  endFold: 2,
  editJournal: 1,
  addRoute: 1,
  // Any number of keys: a split counter's shards and gates.
  incrAndRead: undefined,
} as const

/** A script of this package, by its file's camel name. */
export type ScriptName = keyof typeof SCRIPT_KEYS

// Read once per process; the build copies the .lua files beside this module (scripts/copy-assets.mjs).
const SCRIPTS = new Map<ScriptName, RedisScript>(
  (Object.keys(SCRIPT_KEYS) as ScriptName[]).map((name) => [
    name,
    RedisScript.fromFile(new URL(`./lua/${scriptFile(name)}`, import.meta.url)),
  ]),
)

/** The script of that name. */
export function splitScript(name: ScriptName): RedisScript {
  return SCRIPTS.get(name)!
}

function scriptFile(name: ScriptName): string {
  const keys = SCRIPT_KEYS[name]
  return keys === undefined ? `${name}.lua` : `${name}-${keys}.lua`
}
