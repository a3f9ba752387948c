import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** An application of a user's, outside the workspace: its own directory, package.json and npm install. */
export interface NpmApp {
  readonly dir: string
  /** Writes `file` into the app and runs it with node; resolves with its output, rejects with it on failure. */
  runScript(
    file: string,
    source: string,
    env?: Record<string, string>,
  ): Promise<{ stdout: string; stderr: string }>
  /** The app's node_modules/.bin/<name>. */
  bin(name: string): string
  remove(): Promise<void>
}

/**
 * The environment npm and the app's scripts get: the caller's, without the npm_* variables pnpm and vitest set
 * (pnpm's config in them would steer npm), so the install behaves as in a user's shell.
 */
export function userEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.toLowerCase().startsWith('npm_')) env[name] = value
  }
  return { ...env, ...extra }
}

/**
 * Creates an ESM app under the OS temp directory and installs `dependencies` (name -> a version range, an
 * `npm:` alias or a tarball path) with plain npm, as a user's `npm install` would.
 */
export async function createNpmApp(name: string, dependencies: Record<string, string>): Promise<NpmApp> {
  const dir = await mkdtemp(join(tmpdir(), `heatsink-${name}-`))
  await writeFile(
    join(dir, 'package.json'),
    `${JSON.stringify({ name, private: true, type: 'module', dependencies }, null, 2)}\n`,
  )
  try {
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
      cwd: dir,
      env: userEnv(),
      timeout: 100_000,
    })
  } catch (error) {
    const { stderr = '' } = error as { stderr?: string }
    await rm(dir, { recursive: true, force: true })
    throw new Error(`npm install in ${name} failed:\n${stderr}`)
  }
  return {
    dir,
    async runScript(file, source, env = {}) {
      await writeFile(join(dir, file), source)
      try {
        return await run('node', [file], { cwd: dir, env: userEnv(env), timeout: 30_000 })
      } catch (error) {
        const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string }
        throw new Error(`node ${file} failed in ${name}: ${(error as Error).message}\n${stdout}${stderr}`)
      }
    },
    bin: (command) => join(dir, 'node_modules', '.bin', command),
    remove: () => rm(dir, { recursive: true, force: true }),
  }
}

/** The tarballs of `names`, as npm dependencies (name -> tarball path). */
export function tarballDependencies(
  names: readonly string[],
  tarballs: Record<string, string>,
): Record<string, string> {
  return Object.fromEntries(
    names.map((name) => {
      const tarball = tarballs[name]
      if (tarball === undefined) throw new Error(`${name} was not packed`)
      return [name, `file:${tarball}`]
    }),
  )
}
