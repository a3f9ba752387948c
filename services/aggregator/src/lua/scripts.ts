import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Cluster, Redis, Result } from 'ioredis'

// Next to this module: the build copies the .lua files into dist/lua (scripts/copy-assets.mjs).
const LUA_DIR = fileURLToPath(new URL('./', import.meta.url))

// `<camelName>-<numberOfKeys>.lua`
const SCRIPT_FILE = /^([a-z][A-Za-z0-9]*)-(\d+)\.lua$/

interface Script {
  readonly name: string
  readonly numberOfKeys: number
  readonly lua: string
}

let loaded: readonly Script[] | undefined

/** Every script in this directory, read once per process. */
function scripts(): readonly Script[] {
  loaded ??= readdirSync(LUA_DIR)
    .sort()
    .flatMap((file) => {
      const match = SCRIPT_FILE.exec(file)
      if (match === null) return []
      return [
        { name: match[1]!, numberOfKeys: Number(match[2]), lua: readFileSync(join(LUA_DIR, file), 'utf8') },
      ]
    })
  return loaded
}

/**
 * Registers every script in src/lua on `redis` with defineCommand: `fooBar-2.lua` becomes
 * `redis.fooBar(key1, key2, ...args)`, run by EVALSHA with a fallback to EVAL.
 */
export function defineScripts(redis: Redis | Cluster): void {
  for (const script of scripts()) {
    redis.defineCommand(script.name, { numberOfKeys: script.numberOfKeys, lua: script.lua })
  }
}

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** publishRegistry-1.lua: publishes events above the stored version; returns the versions published. */
    publishRegistry(
      snapshotKey: string,
      snapshotVersion: number,
      snapshot: string,
      channel: string,
      ...eventVersionsAndPayloads: (string | number)[]
    ): Result<number[], Context>
    /** applyReport-1.lua: folds one agent's counts into a window-shard; returns crossing and warm keys. */
    applyReport(
      windowShardKey: string,
      ...args: Array<string | number>
    ): Result<Array<string | number>, Context>
  }
}
