import { useTestPostgres } from '@heatsink/test'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { runFailover, useSentinelDeployment } from './support/sentinel-scenario.js'

const deployment = useSentinelDeployment()
const postgres = useTestPostgres({ scope: 'all' })

describe('the proxy on redis+sentinel:// through SENTINEL FAILOVER', () => {
  it('moves to the new primary by itself: writes resume, no read older than a plain client, L1 and detection back', async () => {
    const figures = await runFailover(
      deployment(),
      postgres().url,
      async () => {
        const sentinel = new Redis(deployment().sentinels[0] as { host: string; port: number })
        await sentinel.call('SENTINEL', 'FAILOVER', deployment().masterName)
        sentinel.disconnect()
      },
      true,
    )
    console.log(`SENTINEL FAILOVER through the proxy: ${JSON.stringify(figures)}`)
    // No read through the proxy (plain GET, or an L1 answer) is older than what a plain ioredis Sentinel client reads.
    expect(figures.maxAgeMs.proxy).toBeLessThanOrEqual(figures.maxAgeMs.plain + 50)
    expect(figures.maxAgeMs.proxyL1).toBeLessThanOrEqual(figures.maxAgeMs.plain + 50)
    expect(figures.writesResumedMs).toBeLessThan(1000)
    expect(figures.l1BackMs).toBeLessThan(1000)
    expect(figures.detectionMs).toBeLessThan(5000)
    expect(figures.restPromotionMs).toBeLessThan(1000)
  }, 29_000)
})
