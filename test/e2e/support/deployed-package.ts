import { execFile } from 'node:child_process'
import { lstatSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'
import { REPO_ROOT } from '@heatsink/test'
import type { DockerStage } from './dockerfile.js'

// The package an image carries, produced here the way its Dockerfile produces it (`pnpm deploy`), so a test can
// look inside it and run it without a Docker daemon.

const run = promisify(execFile)

// What must never reach an image: compilers, bundlers, test runners, linters, package managers.
const DEV_TOOLING = [
  'vitest',
  'typescript',
  'testcontainers',
  '@biomejs/biome',
  'turbo',
  'vite',
  'esbuild',
  'pnpm',
]

/**
 * Runs the RUN instructions of `stage` (the stage whose `outDir` the image copies) in the repository root, with
 * `outDir` replaced by `into`: the same `pnpm deploy` command line as the image build, the root's pnpm first on
 * PATH as `npm install -g pnpm` puts it there in the image.
 */
export async function deployAsTheImageDoes(stage: DockerStage, outDir: string, into: string): Promise<void> {
  const script = stage.instructions
    .filter((instruction) => instruction.keyword === 'RUN')
    .map((instruction) => instruction.args.replaceAll(new RegExp(`(?<=\\s|^)${outDir}(?=\\s|$)`, 'g'), into))
    .join(' && ')
  if (!script.includes(into)) throw new Error(`stage ${stage.name} never writes ${outDir}`)
  await run('sh', ['-c', script], {
    cwd: REPO_ROOT,
    env: { ...process.env, PATH: `${join(REPO_ROOT, 'node_modules', '.bin')}:${process.env.PATH ?? ''}` },
    timeout: 60_000,
  })
}

/** The dev tools installed anywhere in `dir`'s node_modules (pnpm keeps each as `<name>@<version>` in .pnpm). */
export function devToolingIn(dir: string): string[] {
  const installed = readdirSync(join(dir, 'node_modules', '.pnpm'))
  return DEV_TOOLING.filter((tool) => {
    const prefix = `${tool.replace('/', '+')}@`
    return installed.some((entry) => entry.startsWith(prefix))
  })
}

/** Files and directories under `dir` (links aside: their mode means nothing) that group or others may write. */
export function writableByOthers(dir: string): string[] {
  const found: string[] = []
  const visit = (path: string): void => {
    const stat = lstatSync(path)
    if (stat.isSymbolicLink()) return
    if ((stat.mode & 0o022) !== 0) found.push(relative(dir, path) || '.')
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name))
  }
  visit(dir)
  return found
}
