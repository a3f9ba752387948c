import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'

/** Whether a fixture is fresh for every test ('each', the default) or shared by the file's tests ('all'). */
export type FixtureScope = 'each' | 'all'

/** Options of useTestRedis and useTestPostgres. */
export interface UseFixtureOptions {
  readonly scope?: FixtureScope
}

/**
 * Registers hooks in the calling test file that create the fixture before and clean it up after each test
 * (or the whole file), and returns a getter for the current one.
 */
export function useFixture<T>(
  name: string,
  create: () => T | Promise<T>,
  cleanup: (fixture: T) => Promise<void>,
  options: UseFixtureOptions = {},
): () => T {
  let current: T | undefined
  const [before, after] = options.scope === 'all' ? [beforeAll, afterAll] : [beforeEach, afterEach]
  before(async () => {
    current = await create()
  })
  after(async () => {
    const fixture = current
    current = undefined
    if (fixture !== undefined) await cleanup(fixture)
  })
  return () => {
    if (current === undefined) {
      throw new Error(
        `${name}(): the fixture exists only inside tests and hooks that run after its setup hook`,
      )
    }
    return current
  }
}
