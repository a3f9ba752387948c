import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { REPO_ROOT, useTestRedis } from '@heatsink/test'
import { describe, expect, it } from 'vitest'

const redis = useTestRedis()

describe("the quickstart (the README's first command)", () => {
  it('runs a live cluster on the embedded registry, detects and mitigates the viral key, and cleans up', async () => {
    const entry = join(REPO_ROOT, 'services/quickstart/dist/main.js')
    expect(existsSync(entry), 'build first: pnpm test builds before testing').toBe(true)
    // Port 8080 held, as by another quickstart: the run takes another port and says which. (If something else on
    // this machine holds 8080 already, the listen below fails and the port is just as taken.)
    const holder = createServer()
    holder.listen(8080, '127.0.0.1')
    await Promise.race([once(holder, 'listening'), once(holder, 'error')])
    // No DATABASE_URL: the path a newcomer without Postgres takes, on the embedded PGlite.
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, REDIS_URL: redis().url }
    const child = spawn(process.execPath, [entry, '--seconds=14'], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    // The dashboard, fetched while the run is live from the address it prints first.
    let dashboard: Promise<{ status: number; type: string | null; body: string }> | undefined
    child.stdout.on('data', (chunk) => {
      output += String(chunk)
      const address = /^Dashboard: (http:\/\/127\.0\.0\.1:\d+\/)/m.exec(output)?.[1]
      if (address !== undefined && dashboard === undefined) {
        dashboard = fetch(address).then(async (response) => ({
          status: response.status,
          type: response.headers.get('content-type'),
          body: await response.text(),
        }))
      }
    })
    child.stderr.on('data', (chunk) => {
      output += String(chunk)
    })
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    holder.close()
    // Progress from the first line, the dashboard's address before anything else about the cluster.
    expect(output.split('\n')[0]).toBe(
      'Heatsink quickstart: starting Redis, 2 aggregator replicas, 3 agent processes and a proxy...',
    )
    expect(output.indexOf('Dashboard: http://127.0.0.1:')).toBeLessThan(
      output.indexOf('API docs: http://127.0.0.1:'),
    )
    expect(await dashboard).toMatchObject({ status: 200, type: expect.stringContaining('text/html') })
    expect((await dashboard)?.body).toContain('<div id="app">')
    // Piped, it is a log: lines within 120 columns, one per event, and no heading without content under it.
    expect(output.split('\n').filter((line) => line.length > 120)).toEqual([])
    expect(output).not.toMatch(/^Events$/m)
    expect(output).toMatch(/^\[\+\d+s\] Registry: /m)
    expect(output).toContain('API docs: http://127.0.0.1:')
    expect(output).toMatch(/port 8080 is taken; replica 1 listens on http:\/\/127\.0\.0\.1:\d+/)
    expect(output).not.toContain('EADDRINUSE')
    // A namespace of its own, so another run on the same Redis neither doubles its rates nor sees its events.
    const namespace = /namespace (heatsink-quickstart-[0-9a-f]{8})/.exec(output)?.[1]
    expect(namespace, output).toBeDefined()
    expect(output).toMatch(/demo:post:42 promoted \(auto\): local_cache, [0-9.]+ s after the traffic began/)
    expect(output).toContain('demo:post:42 was detected and mitigated.')
    // The node view: its Redis is one node, with its load (which keys sit on it depends on how far the run got
    // by each five-second summary; test/e2e/node-view-cluster.test.ts checks where keys are placed).
    const node = new URL(redis().url).host
    expect(output).toMatch(
      /^Redis nodes \(standalone, imbalance 1\.00\), sampled by the control plane every 1 s$/m,
    )
    expect(output).toMatch(
      new RegExp(`^  ${node.replaceAll('.', '\\.')} +master +[0-9,]+ +[0-9.]+% +[0-9.]+ MB +\\d+ `, 'm'),
    )
    // The flags redeploy (from +7 s, a DEL every 50 ms for 3 s under the storefront's cache-aside reads): one miss
    // storm, raised while it deletes, on the run's Redis, with coalescing applied; and no storm on any other key.
    const storms = [
      ...output.matchAll(
        /^\[\+([\d.]+)s\] miss storm on demo:config:flags on ([\d.:]+): [\d,]+ misses\/s \(baseline [\d,]+\/s\); Heatsink applied coalesce/gm,
      ),
    ]
    expect(
      storms.map((storm) => storm[2]),
      output,
    ).toEqual([node])
    // Raised while it deletes, or just after on a loaded machine whose reports come late.
    expect(Number(storms[0]?.[1]), output).toBeGreaterThanOrEqual(7)
    expect(Number(storms[0]?.[1]), output).toBeLessThan(12)
    expect(output.match(/miss storm on /g), output).toHaveLength(1)
    // The plain client (no Heatsink code) through the proxy: its key detected from the proxy's reports, and then
    // answered by the proxy's L1.
    expect(output).toMatch(/Proxy: redis:\/\/127\.0\.0\.1:\d+/)
    expect(output).toMatch(/demo:profile:celebrity promoted \(auto\): local_cache/)
    const proxied =
      /demo:profile:celebrity via the proxy: [\d,]+ reads by the plain client, ([\d.]+)% from the proxy's L1\n*$/.exec(
        output,
      )
    expect(Number(proxied?.[1]), output).toBeGreaterThan(0)
    expect(code, output).toBe(0)
    const left = await redis().client().keys('demo:*')
    expect(left).toEqual([])
    expect(await redis().client().keys(`${namespace}:*`)).toEqual([])
  }, 60_000)
})
