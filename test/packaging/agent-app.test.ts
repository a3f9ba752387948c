import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { REPO_ROOT, requireServiceUrl, testNamespace } from '@heatsink/test'
import { Redis } from 'ioredis'
import { describe, expect, inject, it } from 'vitest'
import { createNpmApp, type NpmApp, tarballDependencies } from './support/npm-app.js'
import { readmeExamples } from './support/readme-example.js'
import { runTimeClosure, shippedPackages } from './support/workspace-packages.js'

const execute = promisify(execFile)
const [useExample, wrapExample] = readmeExamples('packages/agent', 'js')

// Each app runs the README's examples in a Redis database of its own (the examples name their keys without a
// prefix, as a user's code would), emptied of those keys afterwards.
const RUNS = [
  { ioredis: '^5.9.2', other: 'npm:ioredis@^6.0.0', db: 5 },
  { ioredis: '^6.0.0', other: 'npm:ioredis@^5.9.2', db: 6 },
]

/**
 * Type-checks `files` in the app with the workspace's TypeScript, as a user's strict NodeNext project would
 * (skipLibCheck on, as `tsc --init` sets it: the declarations are built against ioredis 5's types, whose
 * `duplicate` signatures ioredis 6's generic ones do not accept).
 */
async function typecheck(app: NpmApp, files: Record<string, string>): Promise<void> {
  for (const [name, source] of Object.entries(files)) await writeFile(join(app.dir, name), source)
  const compilerOptions = {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ['node'],
  }
  await writeFile(
    join(app.dir, 'tsconfig.json'),
    JSON.stringify({ compilerOptions, files: Object.keys(files) }),
  )
  await execute(join(REPO_ROOT, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], {
    cwd: app.dir,
  }).catch((error: Error & { stdout?: string }) => {
    throw new Error(`tsc failed in ${app.dir}:\n${error.stdout ?? error.message}`)
  })
}

/** REDIS_URL with its database set to `db`. */
function urlWithDatabase(db: number): string {
  const url = new URL(requireServiceUrl('REDIS_URL'))
  url.pathname = `/${db}`
  return url.toString()
}

/** Deletes what the scripts write: the examples' keys, the agent's under the default namespace and `namespace`. */
async function removeExampleKeys(url: string, namespace: string): Promise<void> {
  const admin = new Redis(url, { maxRetriesPerRequest: 1 })
  try {
    const agentKeys = [...(await admin.keys('heatsink:*')), ...(await admin.keys(`${namespace}*`))]
    await admin.del('greeting', 'product:42', ...agentKeys)
  } finally {
    admin.disconnect()
  }
}

describe.concurrent('@heatsink/agent installed with npm in an app outside the workspace', () => {
  it.each(RUNS)('runs the README examples as written with ioredis $ioredis', async (run) => {
    const agentPackages = runTimeClosure('@heatsink/agent', shippedPackages())
    const app = await createNpmApp(`agent-app-ioredis-${run.db}`, {
      ...tarballDependencies(agentPackages, inject('tarballs')),
      ioredis: run.ioredis,
      // A second, different ioredis, for a client the agent did not build from its own copy.
      'other-ioredis': run.other,
      '@types/node': '^20.19.0',
    })
    const url = urlWithDatabase(run.db)
    const namespace = testNamespace()
    try {
      // ioredis is the app's alone: no package brought a private copy whose classes the agent would extend.
      for (const name of agentPackages) {
        expect(existsSync(join(app.dir, 'node_modules', name, 'node_modules', 'ioredis')), name).toBe(false)
      }
      const first = await app.runScript('example.mjs', useExample ?? '', { REDIS_URL: url })
      expect(first.stdout).toBe('hello\nLamp\n')
      const wrapped = await app.runScript('wrap.mjs', wrapExample ?? '', { REDIS_URL: url })
      expect(wrapped.stdout).toBe('hello\n')
      // The same examples type-check against the shipped declarations and the app's ioredis.
      await typecheck(app, { 'example.ts': useExample ?? '', 'wrap.ts': wrapExample ?? '' })

      const identity = await app.runScript(
        'identity.mjs',
        [
          "import { Redis, Cluster } from '@heatsink/agent'",
          "import IORedis from 'ioredis'",
          'const client = new Redis({ lazyConnect: true, heatsink: false })',
          'console.log(client instanceof IORedis.Redis, Cluster.prototype instanceof IORedis.Cluster)',
          "console.log((await import('ioredis/package.json', { with: { type: 'json' } })).default.version)",
        ].join('\n'),
      )
      const [extendsApps, version] = identity.stdout.trim().split('\n')
      expect(extendsApps).toBe('true true')
      expect(version?.split('.')[0]).toBe(run.ioredis.slice(1, 2))

      // A client from the other ioredis (another major version, another copy of its classes) is accepted.
      const otherCopy = await app.runScript(
        'other-copy.mjs',
        [
          "import { createAgent } from '@heatsink/agent'",
          "import IORedis from 'ioredis'",
          "import Other from 'other-ioredis'",
          'const client = new Other.Redis(process.env.REDIS_URL)',
          'console.log(client instanceof IORedis.Redis)',
          `const agent = createAgent({ redis: client, namespace: '${namespace}' })`,
          'await agent.ready()',
          `console.log(await agent.getOrLoad('${namespace}:k', async () => 'loaded', { ttlSeconds: 60 }))`,
          'await agent.close()',
          'client.disconnect()',
        ].join('\n'),
        { REDIS_URL: url },
      )
      expect(otherCopy.stdout).toBe('false\nloaded\n')
    } finally {
      await removeExampleKeys(url, namespace)
      await app.remove()
    }
  })
})
