import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { REPO_ROOT, useTestRedis } from '@heatsink/test'
import { describe, expect, it } from 'vitest'

const redis = useTestRedis()

describe("the quickstart (the README's first command)", () => {
  it('runs a live cluster on the embedded registry, detects and mitigates the viral key, and cleans up', async () => {
    const entry = join(REPO_ROOT, 'services/quickstart/dist/main.js')
    expect(existsSync(entry), 'build first: pnpm test builds before testing').toBe(true)
    // No DATABASE_URL: the path a newcomer without Postgres takes, on the embedded PGlite.
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, REDIS_URL: redis().url }
    const child = spawn(process.execPath, [entry, '--seconds=10'], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk) => {
      output += String(chunk)
    })
    child.stderr.on('data', (chunk) => {
      output += String(chunk)
    })
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    expect(output).toContain('API docs: http://127.0.0.1:')
    expect(output).toMatch(/demo:post:42 promoted \(auto\): local_cache, [0-9.]+ s after the traffic began/)
    expect(output).toContain('demo:post:42 was detected and mitigated.')
    expect(code, output).toBe(0)
    const left = await redis().client().keys('demo:*')
    expect(left).toEqual([])
  }, 60_000)
})
