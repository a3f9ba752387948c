import { heatsinkProject } from '../../test/support/vitest-project.js'

export default heatsinkProject('soak')
