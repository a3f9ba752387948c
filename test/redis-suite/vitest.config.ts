import { heatsinkProject } from '../support/vitest-project.js'

// The suite starts three processes per unit and mode and runs several units at once: on two cores it runs in a
// group of its own, after every other project (the compat projects take groups 0 to 3), so neither it nor the
// timing-sensitive tests elsewhere slow each other down.
export default heatsinkProject('redis-suite', {
  include: ['*.test.ts', 'src/**/*.test.ts'],
  sequence: { groupOrder: 4 },
  // The whole comparison runs once, in the file's beforeAll; each test then reads its share of the results. It
  // took 26 minutes on a two-core machine running four other engineers' builds and tests (load average 20-40).
  hookTimeout: 40 * 60_000,
})
