import { spawnSync } from 'node:child_process'
import { chownSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { quote } from './command-line.js'
import { ServiceStartError } from './errors.js'
import { onProcessExit } from './exit-cleanup.js'
import { freePort } from './free-port.js'
import type { PostgresBinaries } from './postgres-binaries.js'
import { checkPostgres, withPostgresClient } from './postgres-query.js'
import type { PostgresRunner } from './postgres-user.js'
import { runCommand } from './run-command.js'
import type { RunningService } from './running-service.js'

// Another process can take the free port between our probe and the postmaster's bind; a fresh port then succeeds.
const PORT_ATTEMPTS = 3

/** What startPrivatePostgres needs. */
export interface PrivatePostgresOptions {
  readonly binaries: PostgresBinaries
  readonly runner: PostgresRunner
  /** The URL that had nothing behind it; its user and database are created in the private server. */
  readonly requestedUrl: string
  readonly timeoutMs: number
}

/** Creates a throwaway cluster in a temp dir and starts it on a free loopback port; stop() deletes it all. */
export async function startPrivatePostgres(options: PrivatePostgresOptions): Promise<RunningService> {
  const { binaries, runner, timeoutMs } = options
  const base = mkdtempSync(join(tmpdir(), 'heatsink-pg-'))
  const data = join(base, 'data')
  const logFile = join(base, 'postgres.log')
  // The postgres user writes the data dir, the socket and the log under base.
  if (runner.owner !== undefined) chownSync(base, runner.owner.uid, runner.owner.gid)

  const run = (command: string, args: readonly string[]) => {
    const wrapped = runner.wrap(command, args)
    return runCommand(wrapped.command, wrapped.args, { cwd: base, timeoutMs: timeoutMs + 10_000 })
  }
  const stopArgs = ['-D', data, '-m', 'immediate', '-w', 'stop']
  let postmasterMayRun = false
  const forgetExitHook = onProcessExit(() => {
    if (postmasterMayRun) {
      const wrapped = runner.wrap(binaries.pgCtl, stopArgs)
      spawnSync(wrapped.command, wrapped.args, { cwd: base, stdio: 'ignore', timeout: 10_000 })
    }
    rmSync(base, { recursive: true, force: true })
  })
  const stopAndRemove = async () => {
    if (postmasterMayRun) await run(binaries.pgCtl, stopArgs)
    postmasterMayRun = false
    forgetExitHook()
    rmSync(base, { recursive: true, force: true })
  }

  let url: string
  try {
    // --no-sync: a throwaway cluster need not survive a crash, and syncing costs seconds on slow disks.
    // --locale=C: the host's locale may not be generated, and C makes collation identical everywhere.
    const initArgs = [
      '-D',
      data,
      '-U',
      'postgres',
      '--auth=trust',
      '--no-sync',
      '--encoding=UTF8',
      '--locale=C',
    ]
    const init = await run(binaries.initdb, initArgs)
    if (init.code !== 0) {
      throw new ServiceStartError('postgres', init.line, init.output, `initdb exited with code ${init.code}`)
    }
    let port = 0
    for (let attempt = 1; port === 0; attempt++) {
      const candidate = await freePort()
      const serverOptions = [
        ...['-p', String(candidate), '-k', base],
        ...['-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'],
      ]
      const startArgs = ['-D', data, '-w', '-t', String(Math.ceil(timeoutMs / 1000)), '-l', logFile]
      postmasterMayRun = true
      const start = await run(binaries.pgCtl, [
        ...startArgs,
        '-o',
        serverOptions.map(quote).join(' '),
        'start',
      ])
      if (start.code === 0) {
        port = candidate
        break
      }
      const serverLog = readTail(logFile)
      if (attempt < PORT_ATTEMPTS && /could not bind|address already in use/i.test(serverLog)) continue
      const reason = `pg_ctl start exited with code ${start.code}`
      throw new ServiceStartError('postgres', start.line, `${start.output}\n${serverLog}`, reason)
    }
    url = privateUrl(options.requestedUrl, port)
    await createUserAndDatabase(url, port)
    await checkPostgres(url)
  } catch (error) {
    await stopAndRemove()
    throw error
  }

  let stopping: Promise<void> | undefined
  return { url, started: true, stop: () => (stopping ??= stopAndRemove()) }
}

// Same user, database and parameters as asked for, but on the private server, which trusts every local user.
function privateUrl(requestedUrl: string, port: number): string {
  const url = new URL(requestedUrl)
  url.hostname = '127.0.0.1'
  url.port = String(port)
  url.password = ''
  if (url.username === '') url.username = 'postgres'
  for (const param of ['host', 'hostaddr', 'port', 'ssl', 'sslmode']) url.searchParams.delete(param)
  return url.toString()
}

// initdb creates only the postgres role and database; a URL naming others would otherwise fail to connect.
async function createUserAndDatabase(url: string, port: number): Promise<void> {
  const parsed = new URL(url)
  const user = decodeURIComponent(parsed.username)
  const database = decodeURIComponent(parsed.pathname.slice(1)) || user
  if (user === 'postgres' && database === 'postgres') return
  await withPostgresClient(`postgres://postgres@127.0.0.1:${port}/postgres`, 5_000, async (client) => {
    if (user !== 'postgres')
      await client.query(`CREATE ROLE ${client.escapeIdentifier(user)} LOGIN SUPERUSER`)
    if (database !== 'postgres') {
      await client.query(
        `CREATE DATABASE ${client.escapeIdentifier(database)} OWNER ${client.escapeIdentifier(user)}`,
      )
    }
  })
}

function readTail(file: string): string {
  try {
    return readFileSync(file, 'utf8').slice(-8_192)
  } catch {
    return ''
  }
}
