import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { type Aggregator, createAggregator, loadConfig } from '@heatsink/aggregator'
import type { NodesView } from '@heatsink/protocol'
import { usePrivateRedis, useTestPostgres } from '@heatsink/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const redis = usePrivateRedis()
const postgres = useTestPostgres({ scope: 'all' })

const CLI = fileURLToPath(new URL('../dist/main.js', import.meta.url))

describe('heatsink nodes', () => {
  let aggregator: Aggregator
  let address: string

  const heatsink = (args: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      const env = { PATH: process.env.PATH, HEATSINK_URL: aggregator.url() }
      execFile('node', [CLI, ...args], { env }, (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr })
      })
    })

  beforeAll(async () => {
    expect(existsSync(CLI), 'the CLI is not built: run `pnpm build` first').toBe(true)
    address = new URL(redis().url).host
    aggregator = createAggregator(
      loadConfig({
        REDIS_URL: redis().url,
        DATABASE_URL: postgres().url,
        PORT: '0',
        HEATSINK_NODE_SAMPLE_MS: '200',
      }),
    )
    await aggregator.start()
  }, 60_000)

  afterAll(async () => {
    await aggregator?.stop()
  })

  it('lists the Redis node with its figures, as a table and as JSON', async () => {
    let view: NodesView | undefined
    for (const deadline = Date.now() + 15_000; Date.now() < deadline; ) {
      const json = await heatsink(['nodes', '--json'])
      expect(json.code).toBe(0)
      view = JSON.parse(json.stdout) as NodesView
      if (view.nodes[0]?.figures?.opsPerSecond != null) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(view).toMatchObject({ topology: 'standalone', intervalMs: 200 })
    expect(view?.nodes).toEqual([expect.objectContaining({ node: address, role: 'master', up: true })])

    const table = await heatsink(['nodes'])
    expect(table.code).toBe(0)
    const lines = table.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^standalone: 1 node\(s\), imbalance 1\.00 /)
    expect(table.stdout).toContain('OPS/S')
    expect(table.stdout).toContain('CPU')
    const row = lines.find((line) => line.includes(address))
    expect(row).toMatch(/master/)
    expect(row).toMatch(/\d+(\.\d)?[kM]?B/)
    expect((await heatsink(['nodes', '--help'])).stdout).toContain('Usage: heatsink nodes')
  }, 30_000)
})
