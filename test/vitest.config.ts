import { heatsinkProject } from './support/vitest-project.js'

export default heatsinkProject('test', {
  include: ['support-tests/**/*.test.ts'],
})
