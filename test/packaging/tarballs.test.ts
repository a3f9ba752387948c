import { execFileSync } from 'node:child_process'
import { describe, expect, inject, it } from 'vitest'
import { type Manifest, shippedPackages, workspacePackages } from './support/workspace-packages.js'

const shipped = shippedPackages()
const privateNames = new Set(
  workspacePackages()
    .filter((pkg) => pkg.manifest.private === true)
    .map((pkg) => pkg.manifest.name),
)

/** The files a tarball holds (without npm's `package/` folder) and the package.json it carries. */
function readTarball(tarball: string): { files: Set<string>; manifest: Manifest } {
  const listing = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
  const files = new Set(
    listing
      .split('\n')
      .filter(Boolean)
      .map((path) => path.replace(/^package\//, '')),
  )
  const manifest = JSON.parse(
    execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }),
  ) as Manifest
  return { files, manifest }
}

/** Every file an `exports` map points at (conditions and subpaths flattened). */
function exportTargets(exports: unknown): string[] {
  if (typeof exports === 'string') return [exports]
  if (typeof exports !== 'object' || exports === null) return []
  return Object.values(exports).flatMap(exportTargets)
}

/** An exports map as the workspace declares it, without the `@heatsink/source` condition at any depth. */
function withoutSourceCondition(exports: unknown): unknown {
  if (typeof exports !== 'object' || exports === null) return exports
  return Object.fromEntries(
    Object.entries(exports)
      .filter(([condition]) => condition !== '@heatsink/source')
      .map(([key, value]) => [key, withoutSourceCondition(value)]),
  )
}

describe('the packed packages', () => {
  it('are the ones a user needs', () => {
    expect(shipped.map((pkg) => pkg.manifest.name).sort()).toEqual([
      '@heatsink/agent',
      '@heatsink/aggregator',
      '@heatsink/cli',
      '@heatsink/commands',
      '@heatsink/dashboard',
      '@heatsink/protocol',
      '@heatsink/proxy',
      '@heatsink/redis-script',
      '@heatsink/sketch',
      '@heatsink/split',
      '@heatsink/stampede',
    ])
  })

  it.each(shipped.map((pkg) => [pkg.manifest.name, pkg.dir, pkg.manifest] as const))(
    '%s carries a publishable manifest, its license and README, and every file its exports name',
    (name, dir, workspaceManifest) => {
      const tarball = inject('tarballs')[name]
      expect(tarball, `${name} was packed`).toBeDefined()
      const { files, manifest } = readTarball(tarball as string)
      expect(manifest).toMatchObject({
        name,
        license: 'Apache-2.0',
        repository: { type: 'git', directory: dir },
        engines: { node: '>=20.11' },
      })
      expect(manifest.description).toBeTruthy()
      expect(files).toContain('LICENSE')
      expect(files).toContain('README.md')
      const text = JSON.stringify(manifest)
      // The workspace's source condition and workspace: ranges mean nothing outside the repository.
      expect(text).not.toContain('@heatsink/source')
      expect(text).not.toContain('workspace:')
      // publishConfig.exports repeats the workspace's exports: the same entries, less the source condition.
      expect(manifest.exports).toEqual(withoutSourceCondition(workspaceManifest.exports))
      for (const target of [...exportTargets(manifest.exports), ...Object.values(manifest.bin ?? {})]) {
        expect(files, `${name} exports ${target}`).toContain(target.replace(/^\.\//, ''))
      }
      if (manifest.types !== undefined) expect(files).toContain(manifest.types.replace(/^\.\//, ''))
      const runTime = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })
      expect(runTime.filter((dep) => privateNames.has(dep))).toEqual([])
      // Libraries that take a user's client leave ioredis to the application.
      if (manifest.peerDependencies?.ioredis !== undefined) {
        expect(manifest.peerDependencies.ioredis).toBe('^5.9.2 || ^6.0.0')
        expect(manifest.dependencies?.ioredis).toBeUndefined()
      }
    },
  )

  it('ship the aggregator with its migrations and the dashboard it serves', () => {
    const aggregator = readTarball(inject('tarballs')['@heatsink/aggregator'] as string)
    expect([...aggregator.files].some((file) => /^dist\/migrations\/\d{4}_\w+\.sql$/.test(file))).toBe(true)
    const dashboard = readTarball(inject('tarballs')['@heatsink/dashboard'] as string)
    expect(dashboard.files).toContain('dist/index.html')
    expect(aggregator.manifest.dependencies?.['@heatsink/dashboard']).toBe(dashboard.manifest.version)
  })
})
