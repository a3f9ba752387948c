import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    projects: ['packages/*', 'services/*', 'test', 'test/e2e'],
  },
})
