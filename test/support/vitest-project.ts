import { fileURLToPath } from 'node:url'
import { defineProject, type UserWorkspaceConfig } from 'vitest/config'

const globalSetup = fileURLToPath(new URL('./global-setup.ts', import.meta.url))

// Workspace packages resolve to their TypeScript source under this condition, so tests never need a build.
// Only for code vite inlines (workspace packages always are): handing 'import' to Node for externalized
// CommonJS packages made require('pg-pool') inside pg load pg-pool's ESM build, and Node 20's require(esm)
// then returned a module namespace where pg expected a class.
const conditions = ['@heatsink/source', 'module', 'node', 'development|production']
// Vitest also hands the SSR conditions to Node as --conditions for externalized packages, and 'module' is a
// bundlers' condition Node never sets: with it, prom-client's require('@opentelemetry/api') loaded that package's
// `module` build, whose extensionless ESM imports Node cannot resolve. Code runs in Node, so SSR leaves it out.
const nodeConditions = conditions.filter((condition) => condition !== 'module')

/** The vitest project every Heatsink package uses: real services from the global setup, source imports. */
export function heatsinkProject(
  name: string,
  overrides: UserWorkspaceConfig['test'] = {},
): UserWorkspaceConfig {
  return defineProject({
    resolve: { conditions },
    ssr: { resolve: { conditions: nodeConditions } },
    test: {
      name,
      include: ['test/**/*.test.ts', 'e2e/**/*.test.ts'],
      globalSetup: [globalSetup],
      testTimeout: 30_000,
      hookTimeout: 60_000,
      ...overrides,
    },
  })
}
