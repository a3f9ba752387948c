import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { freePort } from '@heatsink/devservices'
import { REPO_ROOT, testNamespace } from '@heatsink/test'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { usePrivateRedis, waitFor } from './support/proxy-fixture.js'

const redis = usePrivateRedis()

const running: ChildProcess[] = []
afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
})

// The built entry, as the image runs it, on free ports; resolves once its agent is ready.
async function serving(shutdownTimeoutMs: number) {
  const port = await freePort()
  const child = spawn('node', ['services/proxy/dist/main.js'], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH,
      REDIS_URL: redis().url,
      PORT: String(port),
      HEATSINK_PROXY_METRICS_PORT: String(await freePort()),
      HEATSINK_NAMESPACE: testNamespace(),
      HEATSINK_SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs),
    },
  })
  running.push(child)
  const log: string[] = []
  for (const stream of [child.stdout, child.stderr]) stream.on('data', (chunk) => log.push(String(chunk)))
  const output = () => log.join('')
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  await waitFor(() => output().includes('"msg":"agent ready"'), 'the proxy to be ready', 15_000)
  return { child, port, output, exited }
}

describe('the proxy process on a second signal and at its shutdown deadline', () => {
  it('exits 1 at once on a second signal while a blocked reply keeps its drain open', async () => {
    const { child, port, output, exited } = await serving(8000)
    const client = new Redis({ port, maxRetriesPerRequest: 0 })
    client.on('error', () => {})
    // A BLPOP that would answer in 5 s: the drain waits for it (up to 6 s of the 8 s deadline).
    void client.blpop(`${testNamespace()}:never`, 5).catch(() => {})
    await waitFor(() => client.status === 'ready', 'the client to connect')
    await new Promise((resolve) => setTimeout(resolve, 200))
    const signalledAt = performance.now()
    child.kill('SIGTERM')
    await waitFor(() => output().includes('"msg":"draining"'), 'the drain to start')
    child.kill('SIGINT')
    expect(await exited, output()).toBe(1)
    expect(performance.now() - signalledAt).toBeLessThan(3000)
    expect(output()).toContain('"signal":"SIGINT","msg":"second signal: exiting without a clean stop"')
    expect(output()).not.toContain('"msg":"stopped"')
    client.disconnect()
  }, 30_000)

  it('exits 1 when the drain is unfinished at HEATSINK_SHUTDOWN_TIMEOUT_MS', async () => {
    // One millisecond: closing the agent's Redis connections alone takes longer.
    const { child, output, exited } = await serving(1)
    child.kill('SIGTERM')
    expect(await exited, output()).toBe(1)
    expect(output()).toContain(
      '"timeoutMs":1,"msg":"drain did not finish before the shutdown deadline; exiting"',
    )
  }, 30_000)
})
