import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, isAbsolute, join } from 'node:path'
import { promisify } from 'node:util'
import type { TestProject } from 'vitest/node'
// Not through @heatsink/test's index: the global setup imports this, and that index loads vitest's runtime.
import { REPO_ROOT } from '../../support/entry-points.js'
import { shippedPackages } from './workspace-packages.js'

const run = promisify(execFile)
const bin = join(REPO_ROOT, 'node_modules', '.bin')

declare module 'vitest' {
  export interface ProvidedContext {
    /** Package name -> its tarball, packed by this setup as `pnpm pack` (which a publish runs) makes it. */
    tarballs: Record<string, string>
  }
}

// Packing runs prepack (the LICENSE copy) and reads each package's directory; a few at a time keep the two
// cores from thrashing.
const PACK_CONCURRENCY = 4

/**
 * Builds what is stale (turbo: cached packages cost nothing) and packs every shipped package into a temporary
 * directory, for the tests that install them as a user would. Removes the directory afterwards.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const shipped = shippedPackages()
  // The root's tools on an absolute PATH, as scripts/test.mjs runs them (turbo then finds the pinned pnpm).
  const env = {
    ...process.env,
    PATH: [bin, ...(process.env.PATH ?? '').split(delimiter).filter((dir) => isAbsolute(dir))].join(
      delimiter,
    ),
  }
  const filters = shipped.map((pkg) => `--filter=${pkg.manifest.name}`)
  await run(join(bin, 'turbo'), ['run', 'build', ...filters, '--output-logs=errors-only'], {
    cwd: REPO_ROOT,
    env,
    timeout: 300_000,
  }).catch((error: Error & { stdout?: string; stderr?: string }) => {
    throw new Error(`the build before packing failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`)
  })

  const dir = await mkdtemp(join(tmpdir(), 'heatsink-packs-'))
  const tarballs: Record<string, string> = {}
  const queue = [...shipped]
  const packNext = async (): Promise<void> => {
    for (let pkg = queue.shift(); pkg !== undefined; pkg = queue.shift()) {
      const { stdout } = await run(join(bin, 'pnpm'), ['pack', '--pack-destination', dir, '--json'], {
        cwd: join(REPO_ROOT, pkg.dir),
        env,
        timeout: 60_000,
      })
      // prepack's own output comes first; the JSON report is the last thing pnpm prints.
      const report = JSON.parse(stdout.slice(stdout.indexOf('\n{') + 1)) as { filename: string }
      tarballs[pkg.manifest.name] = report.filename
    }
  }
  await Promise.all(Array.from({ length: PACK_CONCURRENCY }, packNext))
  project.provide('tarballs', tarballs)
  return () => rm(dir, { recursive: true, force: true })
}
