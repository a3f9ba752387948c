// Longer than 300 lines: every case runs the built command against one control plane (Redis, Postgres and an
// aggregator started once for the file) and shares the helpers that spawn and read it.
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { type AddressInfo, createServer } from 'node:net'
import { fileURLToPath } from 'node:url'
import { type Aggregator, createAggregator, loadConfig, MissStormLog } from '@heatsink/aggregator'
import { encodeReport, STREAM_FIELD, WIRE_VERSION } from '@heatsink/protocol'
import { useTestPostgres, useTestRedis } from '@heatsink/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const redis = useTestRedis({ scope: 'all' })
const postgres = useTestPostgres({ scope: 'all' })

// The built command, run as a user runs it.
const CLI = fileURLToPath(new URL('../dist/main.js', import.meta.url))
const TOKEN = 'cli-test-token'

interface Run {
  code: number
  stdout: string
  stderr: string
}

describe('the heatsink command', () => {
  let aggregator: Aggregator
  let env: NodeJS.ProcessEnv

  // Runs the CLI with `args` in a pipe (no terminal), as a script would.
  const heatsink = (args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<Run> =>
    new Promise((resolve) => {
      execFile('node', [CLI, ...args], { env: { ...env, ...extraEnv } }, (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr })
      })
    })

  beforeAll(async () => {
    expect(existsSync(CLI), 'the CLI is not built: run `pnpm build` first').toBe(true)
    aggregator = createAggregator(
      loadConfig({
        REDIS_URL: redis().url,
        DATABASE_URL: postgres().url,
        HEATSINK_NAMESPACE: redis().namespace,
        HEATSINK_API_TOKEN: TOKEN,
        PORT: '0',
      }),
    )
    await aggregator.start()
    env = { PATH: process.env.PATH, HEATSINK_URL: aggregator.url() }
  }, 60_000)

  afterAll(async () => {
    await aggregator?.stop()
  })

  it('promotes and demotes with the token from the environment, and says when it is missing or refused', async () => {
    const key = `${redis().namespace}:counter/likes`
    const denied = await heatsink(['promote', key, '--mitigation', 'split', '--split-factor', '4'])
    expect(denied).toMatchObject({ code: 4, stdout: '' })
    expect(denied.stderr).toBe(
      'heatsink promote: the control plane needs an API token for this: set HEATSINK_API_TOKEN or pass --token\n',
    )
    const refused = await heatsink(['promote', key, '-m', 'split', '--token', 'wrong'])
    expect(refused.code).toBe(4)
    expect(refused.stderr).toContain('refused the API token')

    const promoted = await heatsink(['promote', key, '-m', 'split', '--split-factor', '4', '--ttl', '600'], {
      HEATSINK_API_TOKEN: TOKEN,
    })
    expect(promoted).toMatchObject({ code: 0, stderr: '' })
    expect(promoted.stdout).toBe(`promoted ${key}: split x4, for 600s (registry v1)\n`)
    expect((await aggregator.registry.get(key))?.splitFactor).toBe(4)

    const rejected = await heatsink(['promote', key, '-m', 'split', '--split-factor', '3'], {
      HEATSINK_API_TOKEN: TOKEN,
    })
    expect(rejected).toMatchObject({
      code: 6,
      stderr: 'heatsink promote: body/splitFactor must be a power of two from 1 to 1024\n',
    })

    const demoted = await heatsink(['demote', key, '--token', TOKEN])
    expect(demoted).toMatchObject({ code: 0, stdout: `demoted ${key}\n` })
    const again = await heatsink(['demote', key, '--token', TOKEN])
    expect(again.code).toBe(5)
    expect(again.stderr).toContain('is not in the registry')
  })

  it('fits a long key into 120 columns when piped, and prints JSON for scripts', async () => {
    const long = `${redis().namespace}:${'very-long-segment/'.repeat(12)}end`
    await aggregator.registry.promote({
      key: long,
      mitigation: 'local_cache',
      source: 'manual',
      actor: 'test',
      reason: 'test',
      ttlSeconds: null,
    })

    const table = await heatsink(['hotkeys'])
    expect(table.code).toBe(0)
    const lines = table.stdout.trimEnd().split('\n')
    expect(lines.every((line) => line.length <= 120)).toBe(true)
    expect(table.stdout).toContain('…')
    expect(table.stdout).toContain('local_cache')

    const json = await heatsink(['hotkeys', '--json'])
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({ key: long, mitigation: 'local_cache' }),
    ])

    const stats = await heatsink(['stats', long])
    expect(stats.code).toBe(0)
    expect(stats.stdout).toMatch(/^key {23}/)
    expect((await heatsink(['stats', `${redis().namespace}:never-seen`])).code).toBe(5)
    await aggregator.registry.demote(long, { actor: 'test', reason: 'test' })
  })

  it('lists the agents from their reports', async () => {
    const windowStart = Math.floor(Date.now() / 1000) * 1000 - 2000
    const report = encodeReport({
      v: WIRE_VERSION,
      kind: 'report',
      agentId: 'cli-agent-1',
      seq: 1,
      windowStart,
      windowMs: 1000,
      total: 10,
      dropped: 3,
      registryVersion: 0,
      candidates: [],
      sketchError: { sampled: 12, meanRelativeError: 0.01, maxRelativeError: 0.2, bound: 30, overBound: 0 },
    })
    await redis().client().xadd(aggregator.names.reportStreamFor('cli-agent-1'), '*', STREAM_FIELD, report)
    let agents: Run | undefined
    for (let attempt = 0; attempt < 50; attempt++) {
      agents = await heatsink(['agents', '--json'])
      if (agents.stdout.includes('cli-agent-1')) break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(JSON.parse(agents?.stdout ?? '[]')).toEqual([
      expect.objectContaining({
        agentId: 'cli-agent-1',
        reportsDropped: 3,
        registryVersion: 0,
        stale: false,
      }),
    ])
    const table = await heatsink(['agents'])
    expect(table.stdout).toMatch(/cli-agent-1 .* 3 .* 0 .* 1\.0%\/20\.0% .* ok/)
  })

  it('follows the events as they happen, one line each, until interrupted', async () => {
    const key = `${redis().namespace}:followed`
    const follower = spawn('node', [CLI, 'events', '--follow'], { env })
    const output = collect(follower)
    await aggregator.registry.promote({
      key,
      mitigation: 'coalesce',
      source: 'manual',
      actor: 'api',
      reason: 'promoted through the API',
      ttlSeconds: null,
    })
    await waitFor(() => output.stdout.includes(`promote coalesce "${key}" (manual, by api)`))
    await aggregator.registry.demote(key, { actor: 'api', reason: 'demoted through the API' })
    await waitFor(() => output.stdout.includes(`demote "${key}" (manual, by api)`))
    follower.kill('SIGINT')
    expect(await exited(follower)).toBe(0)
    const ours = output.stdout.split('\n').filter((line) => line.includes(key))
    expect(ours).toHaveLength(2)
    expect(ours[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ v\d+ promote coalesce /)
  })

  it('prints miss storms among the events, and follows them', async () => {
    const key = `${redis().namespace}:stormy`
    const storms = new MissStormLog(aggregator.redis, aggregator.names.missStormsKey)
    const storm = {
      key,
      node: '127.0.0.1:6379',
      missesPerSecond: 850,
      baselinePerSecond: 3,
      action: 'coalesce_applied',
      mitigation: 'coalesce',
      at: Date.now(),
    } as const
    await storms.append(storm)
    const listed = await heatsink(['events'])
    expect(listed.stdout).toContain(
      `miss_storm "${key}" on 127.0.0.1:6379: 850 misses/s (baseline 3/s); coalesce applied`,
    )
    const follower = spawn('node', [CLI, 'events', '--follow', '--json'], { env })
    const output = collect(follower)
    await waitFor(() => output.stdout.includes(`"key":"${key}"`))
    await storms.append({ ...storm, action: 'already_mitigated', mitigation: 'local_cache', at: Date.now() })
    await waitFor(() => output.stdout.includes('"already_mitigated"'))
    // One more poll: nothing printed twice.
    await new Promise((resolve) => setTimeout(resolve, 1500))
    follower.kill('SIGINT')
    expect(await exited(follower)).toBe(0)
    const ours = output.stdout
      .split('\n')
      .filter((line) => line.includes(key))
      .map((line) => JSON.parse(line))
    expect(ours.map((line) => [line.type, line.action])).toEqual([
      ['miss_storm', 'coalesce_applied'],
      ['miss_storm', 'already_mitigated'],
    ])
  })

  it('redraws top in place on a terminal and prints plain rows in a pipe', async () => {
    const key = `${redis().namespace}:top`
    await aggregator.registry.promote({
      key,
      mitigation: 'local_cache',
      source: 'manual',
      actor: 'test',
      reason: 'test',
      ttlSeconds: null,
    })
    const piped = await heatsink(['top', '--count', '2', '--interval', '0.2'])
    expect(piped.code).toBe(0)
    expect(piped.stdout).not.toContain('\x1b')
    const rows = piped.stdout
      .trimEnd()
      .split('\n')
      .filter((row) => row.includes(key))
    expect(rows).toHaveLength(2)
    expect(rows[0]).toMatch(
      new RegExp(`^\\S+Z "${key}" local_cache split=1 source=manual rps=- l1=- collapse=-$`),
    )

    // `script` gives the command a pseudo-terminal, as a user's shell would.
    const tty = await new Promise<string>((resolve, reject) => {
      execFile(
        'script',
        ['-qec', `stty cols 100 rows 30; node ${CLI} top --count 2 --interval 0.2`, '/dev/null'],
        { env },
        (error, stdout) => (error === null ? resolve(stdout) : reject(error)),
      )
    })
    expect(tty.split('\x1b[H\x1b[2J')).toHaveLength(3)
    expect(tty).toContain('heatsink top')
    expect(tty).toContain(key)
    await aggregator.registry.demote(key, { actor: 'test', reason: 'test' })
  })

  it('says what was wrong with the command line, and when the control plane cannot be reached', async () => {
    const unknown = await heatsink(['promote', 'k', '--mitigaton', 'split'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("Unknown option '--mitigaton'")
    const unknownShort = await heatsink(['hotkeys', '-x'])
    expect(unknownShort.code).toBe(2)
    expect(unknownShort.stderr).toContain("heatsink hotkeys: Unknown option '-x'")
    const missing = await heatsink(['promote', 'k', '--mitigation'])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain(
      "Option '-m, --mitigation <value>' argument missing; see heatsink promote --help",
    )
    const missingGlobal = await heatsink(['hotkeys', '--url'])
    expect(missingGlobal.code).toBe(2)
    expect(missingGlobal.stderr).toContain("Option '-u, --url <value>' argument missing")
    expect((await heatsink(['frobnicate'])).code).toBe(2)
    expect((await heatsink(['promote', 'k', '-m', 'cache'])).stderr).toContain(
      '--mitigation must be one of local_cache, split, coalesce, replica_read',
    )
    const help = await heatsink(['promote', '--help'])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Usage: heatsink promote KEY --mitigation local_cache|split|coalesce')
    for (const command of ['hotkeys', 'top', 'demote', 'stats', 'agents', 'events']) {
      expect((await heatsink([command, '--help'])).stdout).toContain(`Usage: heatsink ${command}`)
    }
    const closed = await closedPort()
    const down = await heatsink(['hotkeys', '--url', `http://127.0.0.1:${closed}`])
    expect(down.code).toBe(3)
    expect(down.stderr).toContain(
      `cannot reach the control plane at http://127.0.0.1:${closed} (ECONNREFUSED)`,
    )
  })
})

// A port nothing listens on: taken from the system, then released.
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

function collect(child: ChildProcess): { stdout: string; stderr: string } {
  const output = { stdout: '', stderr: '' }
  child.stdout?.on('data', (chunk: Buffer) => {
    output.stdout += chunk.toString()
  })
  child.stderr?.on('data', (chunk: Buffer) => {
    output.stderr += chunk.toString()
  })
  return output
}

async function waitFor(condition: () => boolean, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)))
}
