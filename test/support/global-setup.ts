import { ensurePostgres, ensureRedis, type RunningService, redactUrl as redact } from '@heatsink/devservices'
import { hasContainerRuntime, startPostgresContainer, startRedisContainer } from './containers.js'
import type { ProvidedService } from './provided-service.js'
import type { ServiceVariable } from './service-env.js'

/*
 * vitest runs every project's globalSetup one after another in its main process, and workers inherit
 * process.env. So the first setup to run resolves the services and publishes REDIS_URL and DATABASE_URL;
 * every later one finds them set and reuses them. Only the setup that started something stops it, and vitest
 * tears projects down in reverse, so that happens after every other project has finished.
 */

// Shared by the setups of one vitest process (they share globalThis, not modules), so only the first one logs.
const RESOLVED = Symbol.for('heatsink.test.services-resolved')
type Marked = typeof globalThis & { [RESOLVED]?: true }

/** Publishes REDIS_URL and DATABASE_URL for the tests: from the environment, Docker, or local servers. */
export default async function setup(): Promise<() => Promise<void>> {
  const marked = globalThis as Marked
  if (marked[RESOLVED]) return async () => {}

  let containers: Promise<boolean> | undefined
  const containersAvailable = () => (containers ??= hasContainerRuntime())
  const started: ProvidedService[] = []
  try {
    const redis = await provide('REDIS_URL', containersAvailable, startRedisContainer, ensureRedis)
    started.push(redis)
    const postgres = await provide(
      'DATABASE_URL',
      containersAvailable,
      startPostgresContainer,
      ensurePostgres,
    )
    started.push(postgres)
    console.log(`[heatsink] test services: redis ${redis.source}; postgres ${postgres.source}`)
  } catch (error) {
    await Promise.all(started.map((service) => service.stop()))
    throw error
  }
  marked[RESOLVED] = true

  return async () => {
    delete marked[RESOLVED]
    await Promise.all(started.map((service) => service.stop()))
  }
}

// (a) an explicit URL, (b) a container when an engine runs, (c) a local server, found or started.
async function provide(
  variable: ServiceVariable,
  containersAvailable: () => Promise<boolean>,
  startContainer: () => Promise<ProvidedService>,
  ensureLocal: () => Promise<RunningService>,
): Promise<ProvidedService> {
  const explicit = process.env[variable]
  if (explicit !== undefined && explicit !== '') {
    return { url: explicit, source: `from ${variable} (${redact(explicit)})`, stop: async () => {} }
  }

  let containerFailure = ''
  if (await containersAvailable()) {
    try {
      const container = await startContainer()
      return publish(variable, { ...container, source: `${container.source} at ${redact(container.url)}` })
    } catch (error) {
      // An engine that cannot pull or run the image should not block tests that local servers can serve.
      containerFailure = `, after testcontainers failed: ${error instanceof Error ? error.message : String(error)}`
    }
  }

  const local = await ensureLocal()
  const how = local.started ? 'started privately by @heatsink/devservices' : 'already listening'
  return publish(variable, {
    url: local.url,
    source: `${how} at ${redact(local.url)}${containerFailure}`,
    stop: () => local.stop(),
  })
}

// Workers inherit process.env, and later projects' setups read it; stop() puts back what was there.
function publish(variable: ServiceVariable, service: ProvidedService): ProvidedService {
  const previous = process.env[variable]
  process.env[variable] = service.url
  return {
    ...service,
    stop: async () => {
      await service.stop()
      if (previous === undefined) delete process.env[variable]
      else process.env[variable] = previous
    },
  }
}
