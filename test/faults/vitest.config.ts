import { heatsinkProject } from '../support/vitest-project.js'

// Each file starts its own redis-server, Postgres and aggregator processes; on two cores, files side by side
// would time each other's detection instead of the system's, so they run one after another in one fork.
export default heatsinkProject('faults', {
  include: ['*.test.ts'],
  pool: 'forks',
  poolOptions: { forks: { singleFork: true } },
})
