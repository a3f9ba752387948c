import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
// Not through @heatsink/test's index: the global setup imports this, and that index loads vitest's runtime.
import { REPO_ROOT } from '../../support/entry-points.js'

/** A package.json as far as these tests read it. */
export interface Manifest {
  readonly name: string
  readonly version: string
  readonly private?: boolean
  readonly license?: string
  readonly description?: string
  readonly repository?: { readonly type: string; readonly url: string; readonly directory?: string }
  readonly engines?: Record<string, string>
  readonly types?: string
  readonly files?: string[]
  readonly bin?: Record<string, string>
  readonly exports?: Record<string, unknown>
  readonly publishConfig?: { readonly exports?: Record<string, unknown> }
  readonly dependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
  readonly devDependencies?: Record<string, string>
}

/** One workspace package: its directory (relative to the repository root) and manifest. */
export interface WorkspacePackage {
  readonly dir: string
  readonly manifest: Manifest
}

// The folders pnpm-workspace.yaml globs for the packages people may install; test projects are never shipped.
const PACKAGE_FOLDERS = ['packages', 'services']

/** Every package under packages/ and services/. */
export function workspacePackages(): WorkspacePackage[] {
  return PACKAGE_FOLDERS.flatMap((folder) =>
    readdirSync(join(REPO_ROOT, folder), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => {
        const dir = `${folder}/${entry.name}`
        const manifest = JSON.parse(readFileSync(join(REPO_ROOT, dir, 'package.json'), 'utf8')) as Manifest
        return { dir, manifest }
      }),
  )
}

/** The packages a user installs: every workspace package that is not private. */
export function shippedPackages(): WorkspacePackage[] {
  return workspacePackages().filter((pkg) => pkg.manifest.private !== true)
}

/** `name` and the @heatsink packages it needs at run time, transitively (dependencies and peers). */
export function runTimeClosure(name: string, packages: readonly WorkspacePackage[]): string[] {
  const byName = new Map(packages.map((pkg) => [pkg.manifest.name, pkg.manifest]))
  const found = new Set<string>()
  const visit = (current: string): void => {
    if (found.has(current)) return
    found.add(current)
    const manifest = byName.get(current)
    if (manifest === undefined) throw new Error(`${current} is not a workspace package`)
    for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })) {
      if (dep.startsWith('@heatsink/')) visit(dep)
    }
  }
  visit(name)
  return [...found].sort()
}
