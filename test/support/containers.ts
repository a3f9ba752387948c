import type { ProvidedService } from './provided-service.js'

// The images CI and developers with Docker test against; pinned by major so a pull cannot change behavior.
const REDIS_IMAGE = 'redis:7'
const POSTGRES_IMAGE = 'postgres:16'

/**
 * Whether testcontainers finds a container engine. Without one it fails within milliseconds, so asking costs
 * nothing. Imported lazily: a machine without Docker never needs testcontainers to load at all.
 */
export async function hasContainerRuntime(): Promise<boolean> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers')
    await getContainerRuntimeClient()
    return true
  } catch {
    return false
  }
}

/** Starts a throwaway Redis container. */
export async function startRedisContainer(): Promise<ProvidedService> {
  const { RedisContainer } = await import('@testcontainers/redis')
  const container = await new RedisContainer(REDIS_IMAGE).start()
  return {
    url: container.getConnectionUrl(),
    source: `testcontainers (${REDIS_IMAGE})`,
    stop: async () => {
      await container.stop()
    },
  }
}

/** Starts a throwaway Postgres container. */
export async function startPostgresContainer(): Promise<ProvidedService> {
  const { PostgreSqlContainer } = await import('@testcontainers/postgresql')
  const container = await new PostgreSqlContainer(POSTGRES_IMAGE).start()
  return {
    url: container.getConnectionUri(),
    source: `testcontainers (${POSTGRES_IMAGE})`,
    stop: async () => {
      await container.stop()
    },
  }
}
