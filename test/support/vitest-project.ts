import { fileURLToPath } from 'node:url'
import { defineProject, type UserWorkspaceConfig } from 'vitest/config'

const globalSetup = fileURLToPath(new URL('./global-setup.ts', import.meta.url))

// Workspace packages resolve to their TypeScript source under this condition, so tests never need a build.
const conditions = ['@heatsink/source', 'node', 'import', 'module', 'default']

/** The vitest project every Heatsink package uses: real services from the global setup, source imports. */
export function heatsinkProject(
  name: string,
  overrides: UserWorkspaceConfig['test'] = {},
): UserWorkspaceConfig {
  return defineProject({
    resolve: { conditions },
    ssr: { resolve: { conditions, externalConditions: conditions } },
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
