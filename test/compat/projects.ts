import { fileURLToPath } from 'node:url'
import type { TestProjectInlineConfiguration } from 'vitest/config'
import { heatsinkProject } from '../support/vitest-project.js'
import { EXCLUSIONS } from './src/exclusions.js'
import type { ClientName } from './src/provided.js'

/**
 * The clients whose projects run. compat-agent and compat-agent-local-cache wait for `Redis` and `Cluster` in
 * @heatsink/agent: enable them by adding 'agent' and 'agent-local-cache' here.
 */
export const ENABLED_CLIENTS: readonly ClientName[] = ['ioredis', 'agent', 'agent-local-cache', 'proxy']

const root = fileURLToPath(new URL('.', import.meta.url))
const src = (file: string) => fileURLToPath(new URL(`./src/${file}`, import.meta.url))
const vendored = 'ioredis/test'

// ioredis's helpers/mock_server.ts listens on fixed ports (scan_stream.ts's cluster test: 30001-30003), so
// two compat projects must not run at once: each gets a group of its own, run one after the other.
const GROUP_ORDER: Record<ClientName, number> = { ioredis: 0, agent: 1, 'agent-local-cache': 2, proxy: 3 }

function compatProject(client: ClientName): TestProjectInlineConfiguration {
  const base = heatsinkProject(`compat-${client}`)
  const leftOut = EXCLUSIONS.filter(
    (exclusion) => exclusion.onlyTestInFile && (exclusion.clients?.includes(client) ?? true),
  ).map((exclusion) => `${vendored}/functional/${exclusion.file}`)
  return {
    ...base,
    root,
    test: {
      ...base.test,
      // The shim's own tests (src/*.test.ts) need no client but ioredis.
      include: [`${vendored}/functional/*.ts`, ...(client === 'ioredis' ? ['src/**/*.test.ts'] : [])],
      exclude: leftOut,
      // One private redis-server per project; never the shared one.
      globalSetup: [src('global-setup.ts')],
      provide: { compatClient: client },
      globals: true,
      setupFiles: [
        src('mocha-setup.ts'),
        `${vendored}/helpers/global.ts`,
        ...(client === 'agent-local-cache' ? [src('local-cache-setup.ts')] : []),
      ],
      // The helpers FLUSHALL the server after every test: the files of a project run one at a time, in one
      // process (as under mocha), and each file on fresh modules.
      pool: 'forks',
      poolOptions: { forks: { singleFork: true } },
      sequence: { groupOrder: GROUP_ORDER[client], hooks: 'list' },
      // autopipelining's 600 x 1 MB pipeline takes 5 s on plain ioredis, up to 10 s through the L1 cache; on
      // 2026-11-28 the host moved 600 MB slowly enough that plain ioredis alone took 19 s, the proxy over 20 s.
      testTimeout: 60_000,
      hookTimeout: 10_000,
    },
  }
}

/** The compat projects the root runs (vitest.config.ts there spreads them into its `projects`). */
export const compatProjects: TestProjectInlineConfiguration[] = ENABLED_CLIENTS.map(compatProject)
