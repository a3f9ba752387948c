import { heatsinkProject } from '../support/vitest-project.js'

export default heatsinkProject('fleet', { include: ['*.test.ts'] })
