import { fileURLToPath } from 'node:url'
import { heatsinkProject } from '../support/vitest-project.js'

const project = heatsinkProject('packaging', {
  include: ['*.test.ts'],
  // Each test installs packages with npm and runs them as child processes.
  testTimeout: 120_000,
})
// After the services' setup: pack the shipped packages once for every file of this project.
project.test = {
  ...project.test,
  globalSetup: [
    ...[project.test?.globalSetup ?? []].flat(),
    fileURLToPath(new URL('./support/pack-setup.ts', import.meta.url)),
  ],
}

export default project
