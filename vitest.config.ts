import { defineConfig } from 'vitest/config'
import { compatProjects } from './test/compat/projects.js'

export default defineConfig({
  test: {
    // test/compat defines one project per client under test (test/compat/projects.ts).
    projects: [
      'packages/*',
      'services/*',
      'test',
      'test/e2e',
      'test/faults',
      'test/fleet',
      'test/packaging',
      'test/redis-suite',
      ...compatProjects,
    ],
  },
})
