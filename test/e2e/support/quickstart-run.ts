import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { REPO_ROOT } from '@heatsink/test'

/**
 * Runs the built quickstart with `args` and no REDIS_URL or DATABASE_URL (the modes that start their own Redis),
 * piped as a log; resolves to its exit code and everything it printed, stdout and stderr together.
 */
export async function runQuickstart(
  args: readonly string[],
): Promise<{ code: number | null; output: string }> {
  const entry = join(REPO_ROOT, 'services/quickstart/dist/main.js')
  if (!existsSync(entry)) throw new Error('build first: pnpm test builds before testing')
  const child = spawn(process.execPath, [entry, ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH },
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
  return { code, output }
}

/** Whether anything still accepts connections on the port (a server the run failed to stop). */
export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}
