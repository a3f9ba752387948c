import { describe, expect, it } from 'vitest'
import setup from '../support/global-setup.js'

describe('global setup', () => {
  it('published REDIS_URL and DATABASE_URL for the tests', () => {
    expect(process.env.REDIS_URL).toMatch(/^rediss?:\/\//)
    expect(process.env.DATABASE_URL).toMatch(/^postgres(ql)?:\/\//)
  })

  it('reuses the published URLs when it runs again, and its teardown stops nothing', async () => {
    const before = { redis: process.env.REDIS_URL, postgres: process.env.DATABASE_URL }

    const teardown = await setup()
    expect({ redis: process.env.REDIS_URL, postgres: process.env.DATABASE_URL }).toEqual(before)
    await teardown()

    expect({ redis: process.env.REDIS_URL, postgres: process.env.DATABASE_URL }).toEqual(before)
  })
})
