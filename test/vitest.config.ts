import { heatsinkProject } from './support/vitest-project.js'

export default heatsinkProject('test', {
  include: ['support-tests/**/*.test.ts', 'e2e/**/*.test.ts', 'deploy/**/*.test.ts'],
})
