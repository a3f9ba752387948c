import { spawn } from 'node:child_process'
import {
  defaultPostgresBinDirs,
  ensurePostgres,
  findPostgresBinaries,
  freePort,
  type PostgresBinaries,
  type PostgresRunner,
  postgresRunner,
  type RunningService,
} from '@heatsink/devservices'
import pg from 'pg'

/**
 * A private Postgres cluster (devservices' throwaway one) that a test can stop and start again on the same port
 * with its data intact: a database outage, as a failover or a restart looks to its clients.
 */
export class StoppablePostgres {
  readonly url: string
  readonly #service: RunningService
  readonly #binaries: PostgresBinaries
  readonly #runner: PostgresRunner
  readonly #dataDir: string
  readonly #serverOptions: string
  #stopped = false

  private constructor(
    service: RunningService,
    binaries: PostgresBinaries,
    runner: PostgresRunner,
    dataDir: string,
    serverOptions: string,
  ) {
    this.url = service.url
    this.#service = service
    this.#binaries = binaries
    this.#runner = runner
    this.#dataDir = dataDir
    this.#serverOptions = serverOptions
  }

  /** Creates and starts the cluster on a free port, database `faults`. */
  static async start(): Promise<StoppablePostgres> {
    const binaries = findPostgresBinaries(defaultPostgresBinDirs())
    const runner = postgresRunner()
    if (binaries === undefined || typeof runner === 'string') {
      throw new Error(
        `the fault suite needs a private Postgres: apt-get install -y --no-install-recommends postgresql (${runner})`,
      )
    }
    const service = await ensurePostgres({ url: `postgres://postgres@127.0.0.1:${await freePort()}/faults` })
    // The running server says where its data is and how it listens, so a restart repeats exactly that.
    const client = new pg.Client({ connectionString: service.url })
    await client.connect()
    const setting = async (name: string) =>
      (await client.query(`SELECT current_setting('${name}') AS value`)).rows[0].value as string
    const dataDir = await setting('data_directory')
    const options = [
      `-p ${await setting('port')}`,
      `-k ${await setting('unix_socket_directories')}`,
      '-c listen_addresses=127.0.0.1',
      '-c fsync=off',
    ].join(' ')
    await client.end()
    return new StoppablePostgres(service, binaries, runner, dataDir, options)
  }

  /** Fast shutdown: sessions are cut, new connections refused. */
  async stopServer(): Promise<void> {
    await this.#pgCtl(['-D', this.#dataDir, '-m', 'fast', '-w', 'stop'])
    this.#stopped = true
  }

  /** Starts the stopped server again with the same data, port and socket directory. */
  async startServer(): Promise<void> {
    await this.#pgCtl([
      '-D',
      this.#dataDir,
      '-w',
      '-o',
      this.#serverOptions,
      '-l',
      `${this.#dataDir}/../restart.log`,
      'start',
    ])
    this.#stopped = false
  }

  /** Starts the server if a test stopped it and failed before starting it again, so the next test finds it up. */
  async ensureRunning(): Promise<void> {
    if (this.#stopped) await this.startServer()
  }

  /** Ends the cluster and removes its files. */
  stop(): Promise<void> {
    return this.#service.stop()
  }

  async #pgCtl(args: string[]): Promise<void> {
    const { command, args: wrapped } = this.#runner.wrap(this.#binaries.pgCtl, args)
    const child = spawn(command, wrapped, { stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk) => (output += String(chunk)))
    child.stderr.on('data', (chunk) => (output += String(chunk)))
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
    if (code !== 0) throw new Error(`pg_ctl ${args.at(-1)} exited with ${code}: ${output}`)
  }
}
