import { execFileSync } from 'node:child_process'
import { join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { Redis } from 'ioredis'

/** A built checkout whose code is measured: the tree a benchmark runs from, or the base to compare with. */
export interface Build {
  name: string
  dir: string
}

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url))

/**
 * This tree's build and the base named by `--base <dir>` / HEATSINK_BENCH_BASE (a checkout after
 * `pnpm install && pnpm build`), undefined when none is given.
 */
export function buildsToCompare(): { now: Build; base: Build | undefined } {
  const baseDir = process.env.HEATSINK_BENCH_BASE
  return {
    now: { name: shortCommit(REPO_ROOT, 'this tree'), dir: REPO_ROOT },
    base: baseDir ? { name: shortCommit(baseDir, 'base'), dir: resolve(baseDir) } : undefined,
  }
}

/**
 * Registers `key` local_cache in `namespace` with the build's own `@heatsink/agent/testing` publisher, so a base
 * whose registry format differs is still promoted; its agents pick the promotion up by pub/sub.
 */
export async function promoteWithBuildsOwnRegistry(
  build: Build,
  admin: Redis,
  namespace: string,
  key: string,
): Promise<void> {
  const testing = await import(pathToFileURL(join(build.dir, 'packages/agent/dist/testing.js')).href)
  const protocol = await import(pathToFileURL(join(build.dir, 'packages/protocol/dist/index.js')).href)
  await testing.publishRegistry(admin, protocol.createNames(namespace), { key })
  await new Promise((resolve) => setTimeout(resolve, 500))
}

function shortCommit(dir: string, fallback: string): string {
  try {
    return execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
  } catch {
    return fallback
  }
}
