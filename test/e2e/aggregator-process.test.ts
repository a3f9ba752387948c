import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { freePort } from '@heatsink/devservices'
import { AGGREGATOR_COMMAND, REPO_ROOT, useTestPostgres, useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'

const redis = useTestRedis()
const postgres = useTestPostgres()
const TOKEN = 'process-test-token'

describe('the aggregator process (its built entry, which the image runs from the deployed package)', () => {
  const children: ChildProcess[] = []
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
  })

  /** Starts a replica from the built entry on a free port, with `env` added, and resolves once it is ready. */
  async function startReplica(env: Record<string, string> = {}) {
    const [command, ...args] = AGGREGATOR_COMMAND
    expect(
      existsSync(join(REPO_ROOT, args[0] as string)),
      'build first: pnpm test builds before testing',
    ).toBe(true)
    const port = await freePort()
    const output: string[] = []
    const child = spawn(command, args, {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH,
        REDIS_URL: redis().url,
        DATABASE_URL: postgres().url,
        HEATSINK_NAMESPACE: redis().namespace,
        HEATSINK_API_TOKEN: TOKEN,
        HOST: '127.0.0.1',
        PORT: String(port),
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    children.push(child)
    child.stdout?.on('data', (chunk) => output.push(String(chunk)))
    child.stderr?.on('data', (chunk) => output.push(String(chunk)))
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))

    const base = `http://127.0.0.1:${port}`
    const deadline = Date.now() + 20_000
    for (;;) {
      const ready = await fetch(`${base}/readyz`).then(
        (r) => r.status,
        () => 0,
      )
      if (ready === 200) break
      if (Date.now() > deadline) throw new Error(`not ready in time:\n${output.join('')}`)
      await new Promise((r) => setTimeout(r, 100))
    }
    return { child, port, base, exited, output: () => output.join('') }
  }

  it('starts from the built entry, becomes ready, serves a promotion, and exits 0 on SIGTERM', async () => {
    const { child, base, exited, output } = await startReplica()
    const unauthorized = await fetch(`${base}/hotkeys/k%2F1/promote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mitigation: 'local_cache' }),
    })
    expect(unauthorized.status).toBe(401)
    const promoted = await fetch(`${base}/hotkeys/k%2F1/promote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ mitigation: 'local_cache' }),
    })
    expect(promoted.status).toBe(201)
    expect(((await promoted.json()) as { key: string }).key).toBe('k/1')

    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    expect(output()).toContain('"signal":"SIGTERM","timeoutMs":10000,"msg":"stopping"')
    expect(output()).toContain('"msg":"stopped"')
  })

  it('exits 1 at once on a second signal while its stop waits for a request in progress', async () => {
    const { child, port, exited, output } = await startReplica()
    // A promotion whose body is still arriving: the stop lets it finish (for up to three quarters of the
    // deadline), which keeps the stop running long enough for the second signal to land in it.
    const socket = connect(port, '127.0.0.1')
    socket.on('error', () => {})
    socket.write(
      `POST /hotkeys/k/promote HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${TOKEN}\r\n` +
        'content-type: application/json\r\ncontent-length: 100\r\n\r\n{',
    )
    const signalledAt = performance.now()
    child.kill('SIGINT')
    while (!output().includes('"msg":"stopping"')) await new Promise((r) => setTimeout(r, 20))
    child.kill('SIGTERM')
    expect(await exited).toBe(1)
    // Well before the drain's own limit (7.5 s of the default 10 s deadline).
    expect(performance.now() - signalledAt).toBeLessThan(5000)
    expect(output()).toContain('"signal":"SIGTERM","msg":"second signal: exiting without a clean stop"')
    expect(output()).not.toContain('"msg":"stopped"')
    socket.destroy()
  })

  it('exits 1 when its stop is unfinished at HEATSINK_SHUTDOWN_TIMEOUT_MS', async () => {
    // One millisecond: no stop (the HTTP server, Redis and Postgres closed) finishes that fast.
    const { child, exited, output } = await startReplica({ HEATSINK_SHUTDOWN_TIMEOUT_MS: '1' })
    child.kill('SIGTERM')
    expect(await exited).toBe(1)
    expect(output()).toContain(
      '"timeoutMs":1,"msg":"stop did not finish before the shutdown deadline; exiting"',
    )
  })
})
