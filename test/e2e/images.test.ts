import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '@heatsink/devservices'
import { REPO_ROOT, useTestPostgres, useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
import { deployAsTheImageDoes, devToolingIn, writableByOthers } from './support/deployed-package.js'
import { type DockerStage, execForm, parseDockerfile, stageNamed } from './support/dockerfile.js'

// The images' recipes, checked without a Docker daemon: their stages are read from the Dockerfiles, and the
// package each image carries is produced by the Dockerfile's own `pnpm deploy` line, inspected and started.

const NODE_24 = /^node:24[-.]/
const dockerfile = (name: string) => parseDockerfile(readFileSync(join(REPO_ROOT, 'deploy', name), 'utf8'))

// Each Dockerfile's runtime stages; the first is the one `docker build` makes without --target (the last stage).
const IMAGES = [
  { file: 'aggregator.Dockerfile', targets: ['aggregator', 'demo-agent'] },
  { file: 'proxy.Dockerfile', targets: ['proxy'] },
]

/** Where a runtime stage's /app comes from: `COPY --from=<stage> <dir> /app`. */
function packageSource(stages: readonly DockerStage[], target: string): { stage: DockerStage; dir: string } {
  const copy = stageNamed(stages, target).instructions.find((i) => i.keyword === 'COPY')
  const [, from = '', dir = ''] = /^--from=(\S+)\s+(\S+)\s+\/app$/.exec(copy?.args ?? '') ?? []
  return { stage: stageNamed(stages, from), dir }
}

/** The variables a stage's ENV instructions set (`ENV A=1 B=2`). */
function stageEnv(stage: DockerStage): Record<string, string> {
  const pairs = stage.instructions
    .filter((i) => i.keyword === 'ENV')
    .flatMap((i) => i.args.split(/\s+/).map((pair) => pair.split('=') as [string, string]))
  return Object.fromEntries(pairs)
}

describe.each(IMAGES)('deploy/$file', ({ file, targets }) => {
  const stages = dockerfile(file)

  it('builds on Node 24 LTS in every stage, and its last stage is the image built by default', () => {
    const names = new Set(stages.map((stage) => stage.name))
    for (const stage of stages) {
      expect(NODE_24.test(stage.from) || names.has(stage.from), `${stage.name}: FROM ${stage.from}`).toBe(
        true,
      )
    }
    expect(stages.at(-1)?.name).toBe(targets[0])
  })

  it('fetches dependencies from the lockfile alone before the source is copied, then installs offline', () => {
    const build = stageNamed(stages, 'build').instructions
    const at = (test: (args: string, keyword: string) => boolean) =>
      build.findIndex((instruction) => test(instruction.args, instruction.keyword))
    const copyLockfile = at(
      (args, keyword) => keyword === 'COPY' && args.split(/\s+/).includes('pnpm-lock.yaml'),
    )
    const fetch = at((args, keyword) => keyword === 'RUN' && args.startsWith('pnpm fetch'))
    const copySource = at((args, keyword) => keyword === 'COPY' && args === '. .')
    const install = at((args, keyword) => keyword === 'RUN' && /pnpm install --offline/.test(args))
    expect(copyLockfile).toBeGreaterThanOrEqual(0)
    expect(build[copyLockfile]?.args.split(/\s+/)).not.toContain('.')
    expect([copyLockfile < fetch, fetch < copySource, copySource < install]).toEqual([true, true, true])
  })

  it.each(targets)(
    'the %s stage runs as node a production-only package that root owns and alone may change',
    (target) => {
      const runtime = stageNamed(stages, target)
      expect(runtime.instructions.filter((i) => i.keyword === 'USER').at(-1)?.args).toBe('node')
      // COPY without --chown leaves the files root's; nothing in the stage hands them over afterwards.
      for (const instruction of runtime.instructions) {
        expect(instruction.args, instruction.keyword).not.toMatch(/--chown|\bchown\b|--chmod/)
      }
      expect(runtime.instructions.some((i) => i.keyword === 'RUN')).toBe(false)
      const source = packageSource(stages, target)
      expect(source.dir).toBe('/out')
      const deploy = source.stage.instructions.find((i) => i.keyword === 'RUN')?.args ?? ''
      expect(deploy).toMatch(/^pnpm .*--filter @heatsink\/\S+ deploy --prod .*\/out\b/)
      expect(deploy).toMatch(/&& chmod -R go-w \/out$/)
      expect(execForm(runtime.instructions.find((i) => i.keyword === 'CMD'))[0]).toBe('node')
    },
  )
})

describe('the packages the images carry', () => {
  const redis = useTestRedis()
  const postgres = useTestPostgres()
  const cleanups: Array<() => void> = []
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup()
  })

  /** Deploys the package `target`'s /app comes from into a fresh directory, as the image build does. */
  async function deployImage(file: string, target: string): Promise<{ dir: string; runtime: DockerStage }> {
    const stages = dockerfile(file)
    const source = packageSource(stages, target)
    const dir = mkdtempSync(join(tmpdir(), `heatsink-${target}-image-`))
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    await deployAsTheImageDoes(source.stage, source.dir, dir)
    return { dir, runtime: stageNamed(stages, target) }
  }

  /** Starts the stage's CMD in `dir` with the stage's ENV plus `env`, as the container would. */
  function startCmd(dir: string, runtime: DockerStage, env: Record<string, string>) {
    const [command = '', ...args] = execForm(runtime.instructions.find((i) => i.keyword === 'CMD'))
    const output: string[] = []
    const child: ChildProcess = spawn(command, args, {
      cwd: dir,
      env: { PATH: process.env.PATH, ...stageEnv(runtime), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    cleanups.push(() => child.kill('SIGKILL'))
    child.stdout?.on('data', (chunk) => output.push(String(chunk)))
    child.stderr?.on('data', (chunk) => output.push(String(chunk)))
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
    const answers = async (url: string): Promise<void> => {
      const deadline = Date.now() + 20_000
      while (
        (await fetch(url).then(
          (r) => r.status,
          () => 0,
        )) !== 200
      ) {
        if (Date.now() > deadline) throw new Error(`${url} never answered 200:\n${output.join('')}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
    return { child, exited, answers }
  }

  it('the aggregator image: no dev tooling, the migrations inside, and its CMD serves /healthz and /readyz', async () => {
    expect(
      existsSync(join(REPO_ROOT, 'services/aggregator/dist/main.js')),
      'build first (pnpm test does)',
    ).toBe(true)
    const { dir, runtime } = await deployImage('aggregator.Dockerfile', 'aggregator')
    expect(devToolingIn(dir)).toEqual([])
    expect(writableByOthers(dir)).toEqual([])
    const sql = (at: string) => readdirSync(at).filter((name) => name.endsWith('.sql'))
    const shipped = sql(join(dir, 'dist', 'migrations'))
    expect(shipped).toEqual(sql(join(REPO_ROOT, 'migrations')))
    expect(shipped.length).toBeGreaterThan(0)

    const port = await freePort()
    const aggregator = startCmd(dir, runtime, {
      REDIS_URL: redis().url,
      DATABASE_URL: postgres().url,
      HEATSINK_NAMESPACE: redis().namespace,
      HOST: '127.0.0.1',
      PORT: String(port),
    })
    await aggregator.answers(`http://127.0.0.1:${port}/healthz`)
    // Ready includes "migrations applied": the ones shipped in the package, nothing found through the repository.
    await aggregator.answers(`http://127.0.0.1:${port}/readyz`)
    const applied = await postgres().pool.query<{ name: string }>(
      'SELECT name FROM schema_migrations ORDER BY 1',
    )
    expect(applied.rows.map((row) => `${row.name}.sql`)).toEqual(shipped)
    aggregator.child.kill('SIGTERM')
    expect(await aggregator.exited).toBe(0)
  }, 60_000)

  it('the proxy image: no dev tooling, and its CMD answers PING and /healthz', async () => {
    expect(existsSync(join(REPO_ROOT, 'services/proxy/dist/main.js')), 'build first (pnpm test does)').toBe(
      true,
    )
    const { dir, runtime } = await deployImage('proxy.Dockerfile', 'proxy')
    expect(devToolingIn(dir)).toEqual([])
    expect(writableByOthers(dir)).toEqual([])

    const [port, metricsPort] = [await freePort(), await freePort()]
    const proxy = startCmd(dir, runtime, {
      REDIS_URL: redis().url,
      HEATSINK_NAMESPACE: redis().namespace,
      PORT: String(port),
      HEATSINK_PROXY_METRICS_PORT: String(metricsPort),
    })
    await proxy.answers(`http://127.0.0.1:${metricsPort}/healthz`)
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write('*1\r\n$4\r\nPING\r\n'))
      socket.once('data', (data) => {
        resolve(String(data))
        socket.end()
      })
      socket.once('error', reject)
    })
    expect(reply).toBe('+PONG\r\n')
    proxy.child.kill('SIGTERM')
    expect(await proxy.exited).toBe(0)
  }, 60_000)
})
