import { useTestPostgres } from '@heatsink/test'
import { describe, expect, it } from 'vitest'
import { runFailover, useSentinelDeployment } from './support/sentinel-scenario.js'

const deployment = useSentinelDeployment()
const postgres = useTestPostgres({ scope: 'all' })

describe('the proxy on redis+sentinel:// through kill -9 of the primary', () => {
  it('says so on /healthz, then moves to the promoted replica by itself: writes resume, no read older than a plain client', async () => {
    const figures = await runFailover(
      deployment(),
      postgres().url,
      async () => {
        const primary = await deployment().primary()
        await deployment()
          .servers.find((server) => server.port === primary.port)
          ?.crash()
      },
      false,
    )
    console.log(`kill -9 of the primary through the proxy: ${JSON.stringify(figures)}`)
    expect(figures.healthzNoPrimary).toBe(true)
    expect(figures.maxAgeMs.proxy).toBeLessThanOrEqual(figures.maxAgeMs.plain + 50)
    expect(figures.maxAgeMs.proxyL1).toBeLessThanOrEqual(figures.maxAgeMs.plain + 50)
    expect(figures.writesResumedMs).toBeLessThan(1000)
    // Within 1 s in most runs (0.17-0.70 s); a fill in flight when the agent's tracking connection died can hold
    // the key's reads until the reader's 2 s timeout (bounded by the fill deadline, l1.fillTimeoutMs).
    expect(figures.l1BackMs).toBeLessThan(2500)
    expect(figures.detectionMs).toBeLessThan(5000)
    expect(figures.restPromotionMs).toBeLessThan(1000)
  }, 29_000)
})
