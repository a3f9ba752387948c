import { inject } from 'vitest'
import type { CompatClient } from './clients/compat-client.js'
import './provided.js'

/** The private redis-server of this project (global-setup.ts): where `new Redis()` connects. */
export const server = { host: '127.0.0.1', port: inject('compatRedisPort') }

/** The client under test in this project, chosen by its `compatClient`; only that client's module is loaded. */
export const client: CompatClient =
  inject('compatClient') === 'ioredis' || inject('compatClient') === 'proxy'
    ? (await import('./clients/ioredis.js')).ioredisClient(server)
    : (await import('./clients/agent.js')).agentClient(server)
