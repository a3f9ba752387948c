import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { Agent, type IncomingMessage, request } from 'node:http'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import { freePort } from '@heatsink/devservices'
import { AGGREGATOR_COMMAND, REPO_ROOT, useTestPostgres, useTestRedis } from '@heatsink/test'
import { afterEach, describe, expect, it } from 'vitest'
// The aggregator's own test proxy (node:net only): a path to Redis that can be made to pass nothing.
import { ChaosProxy } from '../../services/aggregator/test/support/chaos-proxy.js'

const redis = useTestRedis()
const postgres = useTestPostgres()

const TOKEN = 'shutdown-test-token'
const TIMEOUT_MS = 3000

/** Resolves with the time (performance.now()) at which `socket` closes. */
const closedAt = (socket: Socket) =>
  new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now())))

/** Resolves with the status once the answer is read, when a keep-alive agent has put the connection back. */
const status = (port: number, path: string, agent: Agent) =>
  new Promise<number>((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, agent }, (response: IncomingMessage) => {
      response.resume()
      response.once('end', () => setImmediate(() => resolve(response.statusCode ?? 0)))
    })
      .on('error', reject)
      .end()
  })

describe('the aggregator process on SIGTERM (HEATSINK_SHUTDOWN_TIMEOUT_MS=3000)', () => {
  // The process under test, killed after each test if it is still running.
  let running: ChildProcess | undefined
  // Two keep-alive clients: one left idle between requests, one whose request is in progress.
  const idleAgent = new Agent({ keepAlive: true })
  const busyAgent = new Agent({ keepAlive: true })
  let proxy: ChaosProxy | undefined
  afterEach(async () => {
    running?.kill('SIGKILL')
    running = undefined
    idleAgent.destroy()
    busyAgent.destroy()
    await proxy?.close()
    proxy = undefined
  })

  /** Starts the built entry, waits until /readyz answers 200 (asked through idleAgent). */
  async function startAggregator(redisUrl: string) {
    const [command, ...args] = AGGREGATOR_COMMAND
    expect(
      existsSync(join(REPO_ROOT, args[0] as string)),
      'build first: pnpm test builds before testing',
    ).toBe(true)
    const port = await freePort()
    const output: string[] = []
    const started = spawn(command, args, {
      cwd: REPO_ROOT,
      env: {
        PATH: process.env.PATH,
        REDIS_URL: redisUrl,
        DATABASE_URL: postgres().url,
        HEATSINK_NAMESPACE: redis().namespace,
        HEATSINK_API_TOKEN: TOKEN,
        HEATSINK_SHUTDOWN_TIMEOUT_MS: String(TIMEOUT_MS),
        HOST: '127.0.0.1',
        PORT: String(port),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    running = started
    started.stdout?.on('data', (chunk) => output.push(String(chunk)))
    started.stderr?.on('data', (chunk) => output.push(String(chunk)))
    const exited = once(started, 'exit').then(([code]) => {
      running = undefined
      return { code: code as number | null, at: performance.now() }
    })
    const deadline = Date.now() + 20_000
    for (;;) {
      const ready = await status(port, '/readyz', idleAgent).catch(() => 0)
      if (ready === 200) break
      if (Date.now() > deadline) throw new Error(`not ready in time:\n${output.join('')}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    return { child: started, port, output, exited }
  }

  it('closes idle keep-alive and unused connections at once, answers the request in progress, cuts off a stuck client, and exits 0 within the deadline', async () => {
    // Readiness went through the keep-alive agent: its connection stays open, idle, afterwards.
    const { child, port, output, exited } = await startAggregator(redis().url)
    const idle = Object.values(idleAgent.freeSockets).flat()[0] as Socket | undefined
    expect(idle, 'the keep-alive agent holds an idle connection').toBeDefined()
    const idleClosed = closedAt(idle as Socket)

    // A connection opened ahead of need (as load balancers do), with nothing sent on it.
    const unused = connect(port, '127.0.0.1')
    await once(unused, 'connect')
    const unusedClosed = closedAt(unused)

    // A promotion whose body is still arriving when SIGTERM comes: `100 Continue` tells that the server has its
    // headers, so the request is in progress, not merely on the wire.
    const body = JSON.stringify({ mitigation: 'local_cache' })
    const inFlight = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/hotkeys/slow%2Fclient/promote',
      agent: busyAgent,
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        expect: '100-continue',
      },
    })
    const answered = new Promise<{ status: number; connection: string | undefined; text: string }>(
      (resolve, reject) => {
        inFlight.on('error', reject)
        inFlight.on('response', (response) => {
          let text = ''
          response.on('data', (chunk) => {
            text += String(chunk)
          })
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, connection: response.headers.connection, text }),
          )
        })
      },
    )
    await once(inFlight, 'continue')
    inFlight.write(body.slice(0, 5))

    // A client that sends half a request and then nothing: only the deadline ends it.
    const stuck = connect(port, '127.0.0.1')
    await once(stuck, 'connect')
    stuck.write(
      `POST /hotkeys/stuck/promote HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
    )
    await once(stuck, 'data')
    stuck.write(body.slice(0, 5))
    stuck.resume()
    const stuckClosed = closedAt(stuck)

    const signalledAt = performance.now()
    child.kill('SIGTERM')

    // Idle and unused connections are closed at once, not after Node's minute-long header timeout.
    expect((await idleClosed) - signalledAt).toBeLessThan(1000)
    expect((await unusedClosed) - signalledAt).toBeLessThan(1000)

    // The request in progress is answered after SIGTERM, and told that its connection ends.
    await new Promise((resolve) => setTimeout(resolve, 500))
    inFlight.end(body.slice(5))
    const answer = await answered
    expect(answer.status, answer.text).toBe(201)
    expect(JSON.parse(answer.text)).toMatchObject({ key: 'slow/client', mitigation: 'local_cache' })
    expect(answer.connection).toBe('close')

    // The stuck client is cut off at three quarters of the deadline, and the process exits cleanly within it.
    const stuckAfter = (await stuckClosed) - signalledAt
    expect(stuckAfter).toBeGreaterThan(TIMEOUT_MS * 0.75 - 250)
    const { code, at } = await exited
    expect(code, output.join('')).toBe(0)
    expect(at - signalledAt).toBeLessThan(TIMEOUT_MS + 1000)
    expect(output.join('')).toContain('requests still in progress at the shutdown deadline')
  }, 40_000)

  it('exits 1 at the deadline when Redis stops answering mid-stop', async () => {
    const url = new URL(redis().url)
    proxy = new ChaosProxy({ host: url.hostname, port: Number(url.port || 6379) })
    await proxy.start()
    url.host = `127.0.0.1:${proxy.port}`
    const { child, output, exited } = await startAggregator(url.toString())

    // Every Redis connection open and silent: the blocking report reads and QUIT never answer.
    proxy.stall()
    const signalledAt = performance.now()
    child.kill('SIGTERM')
    const { code, at } = await exited
    expect(code, output.join('')).toBe(1)
    expect(at - signalledAt).toBeGreaterThanOrEqual(TIMEOUT_MS - 100)
    expect(at - signalledAt).toBeLessThan(TIMEOUT_MS + 1000)
    expect(output.join('')).toContain('stop did not finish before the shutdown deadline')
  }, 40_000)
})
