import { heatsinkProject } from '../support/vitest-project.js'

export default heatsinkProject('e2e', { include: ['*.test.ts'] })
