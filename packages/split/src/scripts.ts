import { readFileSync } from 'node:fs'
import type { Cluster, Redis } from 'ioredis'

// Every script this package runs, by file name (`<camelName>-<numberOfKeys>.lua`). Registered under a `split`
// prefix so that another package's command of the same name on a shared client cannot replace them.
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
  leaseRenew: 1,
  leaseRelease: 1,
  endFold: 2,
  editJournal: 1,
} as const

/** A script of this package, by its file's camel name. */
export type ScriptName = keyof typeof SCRIPT_KEYS

const SOURCES = new Map<ScriptName, { numberOfKeys: number; lua: string }>(
  (Object.keys(SCRIPT_KEYS) as ScriptName[]).map((name) => {
    const numberOfKeys = SCRIPT_KEYS[name]
    const lua = readFileSync(new URL(`./lua/${name}-${numberOfKeys}.lua`, import.meta.url), 'utf8')
    return [name, { numberOfKeys, lua }]
  }),
)

const COMMANDS = new Map<ScriptName, string>(
  [...SOURCES.keys()].map((name) => [name, `split${name[0]!.toUpperCase()}${name.slice(1)}`]),
)

/** The ioredis command name a script is registered under. */
export function scriptCommand(name: ScriptName): string {
  return COMMANDS.get(name)!
}

/** Registers every script on a client (idempotent), so it and its pipelines can run them by command name. */
export function defineSplitScripts(redis: Redis | Cluster): void {
  for (const [name, source] of SOURCES) {
    const command = scriptCommand(name)
    if (!(command in redis)) redis.defineCommand(command, source)
  }
}
