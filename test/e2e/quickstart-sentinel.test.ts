import { describe, expect, it } from 'vitest'
import { listening, runQuickstart } from './support/quickstart-run.js'

describe('the quickstart on Sentinel (pnpm start -- --sentinel)', () => {
  it('fails the primary over live and keeps the viral key mitigated, detection going and traffic flowing', async () => {
    // No REDIS_URL and no DATABASE_URL: Sentinel mode starts its own deployment whatever is configured.
    const { code, output } = await runQuickstart(['--sentinel', '--seconds=28'])

    expect(output.split('\n')[0]).toBe(
      'Heatsink quickstart: starting Redis Sentinel (a primary, 2 replicas, 3 sentinels), 2 aggregator replicas, 3 agent processes and a proxy...',
    )
    // Every component is given the one redis+sentinel:// URL, printed for the newcomer to reuse.
    const url = /Redis: (redis\+sentinel:\/\/[\d.:,]+\/heatsink-quickstart) \(private/.exec(output)?.[1]
    expect(url, output).toBeDefined()
    expect(output).toMatch(/demo:post:42 promoted \(auto\): local_cache/)

    // The switch, as a sentinel announced it: a new primary, a moment after the command.
    const moved =
      /\[\+([\d.]+)s\] Failover: the primary moved ([\d.:]+) -> ([\d.:]+) \(\+switch-master ([\d.]+) s/.exec(
        output,
      )
    expect(moved, output).not.toBeNull()
    const [, movedAt, from, to] = moved as RegExpExecArray
    expect(to).not.toBe(from)
    // The failover waits for the viral key's mitigation, so it is seen to survive it.
    expect(output.indexOf('demo:post:42 promoted')).toBeLessThan(
      output.indexOf('Failover: SENTINEL FAILOVER'),
    )

    // After it: the key still mitigated and served from L1, and the agents' reports still reach the control plane.
    const after =
      /After the failover: demo:post:42 still local_cache, ([\d,]+) req\/s reported by the agents, ([\d.]+)% from L1/.exec(
        output,
      )
    expect(after, output).not.toBeNull()
    expect(Number(after?.[1]?.replaceAll(',', ''))).toBeGreaterThan(1000)
    expect(Number(after?.[2])).toBeGreaterThan(80)
    // Detection goes on: a key turned hot after the switch is promoted.
    const promotedLater = [...output.matchAll(/\[\+([\d.]+)s\] (\S+) promoted \(auto\)/g)].filter(
      (match) => Number(match[1]) > Number(movedAt),
    )
    expect(promotedLater.length, output).toBeGreaterThan(0)
    // The plain client through the proxy is still answered from the proxy's L1 at the end.
    const proxied = /via the proxy: [\d,]+ reads by the plain client, ([\d.]+)% from the proxy's L1\n*$/.exec(
      output,
    )
    expect(Number(proxied?.[1]), output).toBeGreaterThan(50)
    expect(output).not.toContain('Unhandled error event')
    expect(output).toContain('demo:post:42 was detected and mitigated.')
    expect(code, output).toBe(0)

    // Everything the run started is gone: no sentinel answers any more.
    const ports = [...(url as string).matchAll(/:(\d+)/g)].map((match) => Number(match[1]))
    expect(ports).toHaveLength(3)
    expect(await Promise.all(ports.map(listening))).toEqual([false, false, false])
  }, 120_000)
})
