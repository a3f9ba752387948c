import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { freePort } from '@heatsink/devservices'
import { useTestPostgres, useTestRedis } from '@heatsink/test'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { type StartedCommand, startCommand, waitUntil } from './support/child.js'
import { createNpmApp, type NpmApp, tarballDependencies, userEnv } from './support/npm-app.js'
import { runTimeClosure, shippedPackages } from './support/workspace-packages.js'

const run = promisify(execFile)
const redis = useTestRedis()
const postgres = useTestPostgres()

/** The commands' environment: a user's, without the test runner's REDIS_URL and DATABASE_URL. */
function commandEnv(extra: Record<string, string>): Record<string, string> {
  const { REDIS_URL: _redis, DATABASE_URL: _database, ...env } = userEnv()
  return { ...env, ...extra }
}

describe('the aggregator, the proxy and the CLI installed with npm in an app outside the workspace', () => {
  let app: NpmApp
  const started: StartedCommand[] = []

  beforeAll(async () => {
    const shipped = shippedPackages()
    const names = new Set(
      ['@heatsink/aggregator', '@heatsink/proxy', '@heatsink/cli'].flatMap((name) =>
        runTimeClosure(name, shipped),
      ),
    )
    app = await createNpmApp('services-app', tarballDependencies([...names], inject('tarballs')))
  }, 120_000)

  afterAll(async () => {
    await Promise.all(started.map((command) => command.stop()))
    await app?.remove()
  })

  function start(command: string, env: Record<string, string>, args: string[] = []): StartedCommand {
    const startedCommand = startCommand(app.bin(command), args, commandEnv(env))
    started.push(startedCommand)
    return startedCommand
  }

  it('heatsink-aggregator refuses a bad environment with the variable named, and exits 2', async () => {
    const aggregator = start('heatsink-aggregator', { REDIS_URL: 'localhost:6379' })
    expect(await aggregator.exited()).toBe(2)
    expect(aggregator.output()).toMatch(
      /REDIS_URL: expected a redis:\/\/, rediss:\/\/, redis\+sentinel:\/\/ or rediss\+sentinel:\/\/ URL, got 'localhost:6379'/,
    )
  })

  it('heatsink-aggregator migrates, serves /healthz, the dashboard and the API; heatsink drives it', async () => {
    const port = await freePort()
    const token = 'packaging-test-token'
    const aggregator = start('heatsink-aggregator', {
      REDIS_URL: redis().url,
      DATABASE_URL: postgres().url,
      HEATSINK_NAMESPACE: redis().namespace,
      HEATSINK_API_TOKEN: token,
      HOST: '127.0.0.1',
      PORT: String(port),
    })
    const base = `http://127.0.0.1:${port}`
    await waitUntil(aggregator, async () => (await fetch(`${base}/readyz`)).ok, 'ready')
    expect((await fetch(`${base}/healthz`)).status).toBe(200)
    const dashboard = await fetch(`${base}/`)
    expect(dashboard.status).toBe(200)
    expect(dashboard.headers.get('content-type')).toMatch(/text\/html/)

    const cli = (...args: string[]) =>
      run(app.bin('heatsink'), args, { env: commandEnv({ HEATSINK_URL: base, HEATSINK_API_TOKEN: token }) })
    const help = await cli('--help')
    expect(help.stdout).toMatch(/promote/)
    await cli('promote', 'product:42', '--mitigation', 'local_cache', '--ttl', '60')
    const listed = JSON.parse((await cli('hotkeys', '--json')).stdout) as unknown
    expect(listed).toMatchObject([{ key: 'product:42', mitigation: 'local_cache', source: 'manual' }])

    expect(await aggregator.stop()).toBe(0)
  })

  it('heatsink-proxy refuses a bad environment, and serves Redis commands on its port', async () => {
    const refused = start('heatsink-proxy', { REDIS_URL: 'localhost:6379' })
    expect(await refused.exited()).toBe(2)
    expect(refused.output()).toMatch(
      /REDIS_URL: expected a redis:\/\/, rediss:\/\/, redis\+sentinel:\/\/ or rediss\+sentinel:\/\/ URL/,
    )

    const [port, metricsPort] = [await freePort(), await freePort()]
    const proxy = start('heatsink-proxy', {
      REDIS_URL: redis().url,
      PORT: String(port),
      HEATSINK_PROXY_METRICS_PORT: String(metricsPort),
      HEATSINK_NAMESPACE: redis().namespace,
    })
    const client = new Redis({ port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
    try {
      await waitUntil(
        proxy,
        async () => (await fetch(`http://127.0.0.1:${metricsPort}/healthz`)).ok,
        'healthy',
      )
      await client.connect()
      const key = `${redis().namespace}:through-proxy`
      expect(await client.set(key, 'v', 'EX', 60)).toBe('OK')
      expect(await client.get(key)).toBe('v')
    } finally {
      client.disconnect()
    }
    expect(await proxy.stop()).toBe(0)
  })
})
