import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { freePort } from '@heatsink/devservices'
import { AGGREGATOR_COMMAND, REPO_ROOT, useTestPostgres, useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'

const redis = useTestRedis()
const postgres = useTestPostgres()

describe('the aggregator process (its built entry, which the image runs from the deployed package)', () => {
  let child: ChildProcess | undefined
  afterEach(() => {
    child?.kill('SIGKILL')
  })

  it('starts from the built entry, becomes ready, serves a promotion, and exits 0 on SIGTERM', async () => {
    const [command, ...args] = AGGREGATOR_COMMAND
    expect(
      existsSync(join(REPO_ROOT, args[0] as string)),
      'build first: pnpm test builds before testing',
    ).toBe(true)
    const port = await freePort()
    const output: string[] = []
    child = spawn(command, args, {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH,
        REDIS_URL: redis().url,
        DATABASE_URL: postgres().url,
        HEATSINK_NAMESPACE: redis().namespace,
        HEATSINK_API_TOKEN: 'process-test-token',
        HOST: '127.0.0.1',
        PORT: String(port),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    child.stdout?.on('data', (chunk) => output.push(String(chunk)))
    child.stderr?.on('data', (chunk) => output.push(String(chunk)))
    const exited = new Promise<number | null>((resolve) => child?.once('exit', (code) => resolve(code)))

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
    const unauthorized = await fetch(`${base}/hotkeys/k%2F1/promote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mitigation: 'local_cache' }),
    })
    expect(unauthorized.status).toBe(401)
    const promoted = await fetch(`${base}/hotkeys/k%2F1/promote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer process-test-token' },
      body: JSON.stringify({ mitigation: 'local_cache' }),
    })
    expect(promoted.status).toBe(201)
    expect(((await promoted.json()) as { key: string }).key).toBe('k/1')

    child.kill('SIGTERM')
    expect(await exited).toBe(0)
    child = undefined
  })
})
