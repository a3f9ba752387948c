import { execFileSync, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { connect, type Socket } from 'node:net'

/** What redis-benchmark runs against one port: one test, -c clients, -n requests, -P pipeline, -r keyspace. */
export interface RedisBenchmarkLoad {
  test: 'get' | 'set'
  requests: number
  pipeline: number
  /** -r: keys drawn from this many; undefined for the one key `key:__rand_int__`. */
  keyspace: number | undefined
  clients?: number
}

/** One redis-benchmark run's figures, from its --csv line. */
export interface RedisBenchmarkRun {
  rps: number
  p50: number
  p99: number
}

/**
 * Runs redis-benchmark once and parses its CSV. `prefix` goes before the binary (a CPU pinning such as
 * `taskset -c 0`), so the client can be kept off the cores it would otherwise share with what it measures.
 */
export async function redisBenchmark(
  binary: string,
  port: number,
  load: RedisBenchmarkLoad,
  prefix: readonly string[] = [],
): Promise<RedisBenchmarkRun> {
  const args = ['-p', String(port), '-c', String(load.clients ?? 50), '-n', String(load.requests)]
  args.push('-t', load.test, '--csv')
  if (load.pipeline > 1) args.push('-P', String(load.pipeline))
  if (load.keyspace !== undefined) args.push('-r', String(load.keyspace))
  const [command, ...rest] = [...prefix, binary, ...args] as [string, ...string[]]
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(command, rest)
    let stdout = ''
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text
    })
    child.on('error', reject)
    child.on('close', (code) =>
      code === 0 ? resolve(stdout) : reject(new Error(`redis-benchmark exited ${code}`)),
    )
  })
  // "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
  const cells = (output.trim().split('\n')[1] ?? '')
    .split(',')
    .map((cell) => Number(cell.replaceAll('"', '')))
  return { rps: cells[1] ?? 0, p50: cells[4] ?? 0, p99: cells[6] ?? 0 }
}

/** A connection to `port` that has had its PONG, so the server behind it is known to answer. */
export function openIdle(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' })
    socket.setTimeout(5000, () => {
      socket.destroy()
      reject(new Error(`no PONG from port ${port} within 5 s`))
    })
    socket.once('error', reject)
    socket.once('connect', () => {
      socket.write('*1\r\n$4\r\nPING\r\n')
      socket.once('data', () => {
        socket.setTimeout(0)
        resolve(socket)
      })
    })
  })
}

/** Resolves once something on `port` answers PING; rejects after 15 s. */
export async function waitForPort(port: number): Promise<void> {
  const deadline = Date.now() + 15_000
  for (;;) {
    try {
      const socket = await openIdle(port)
      socket.destroy()
      return
    } catch (error) {
      if (Date.now() > deadline) throw error
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

// The benchmarks install what they compare against when missing (the machines run Debian as root).
export function ensureDebianBinary(path: string, debianPackage: string): string {
  if (existsSync(path)) return path
  const install = () =>
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', debianPackage], { stdio: 'inherit' })
  try {
    install()
  } catch {
    execFileSync('apt-get', ['update'], { stdio: 'inherit' })
    install()
  }
  return path
}
