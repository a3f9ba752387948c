import { Agent as HttpAgent, request } from 'node:http'
import type { Socket } from 'node:net'
import { createNames } from '@heatsink/protocol'
import { afterEach, describe, expect, it } from 'vitest'
import { usePrivateServices } from './support/private-services.js'
import { reportBurst, sendReports } from './support/stand-in-agents.js'
import { until } from './support/until.js'
import { pendingFor, pendingReports, windowSums } from './support/window-sums.js'

const world = usePrivateServices()
const SHUTDOWN_TIMEOUT_MS = 3000
const WINDOW_MS = 1000

/** A POST whose body is held back until `finish()`, so it is in progress when the signal comes. */
function heldPost(port: number, path: string, body: string, agent: HttpAgent) {
  const post = request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path,
    agent,
    headers: {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      expect: '100-continue',
    },
  })
  const answer = new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
    post.on('error', reject)
    post.on('response', (response) => {
      response.resume()
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, connection: response.headers.connection }),
      )
    })
  })
  // `100 Continue`: the server has the headers, so the request is in progress, not merely on the wire.
  const started = new Promise((resolve) => post.once('continue', resolve)).then(() =>
    post.write(body.slice(0, 3)),
  )
  return { started, answer, finish: () => post.end(body.slice(3)) }
}

describe('SIGTERM to one of two replicas with keep-alive clients and reports in flight', () => {
  const keepAlive = new HttpAgent({ keepAlive: true })
  afterEach(() => keepAlive.destroy())

  it('exits 0 within the deadline, answers the request in progress, and leaves no report uncounted or counted twice', async () => {
    const { redis } = world()
    const names = createNames(redis.namespace)
    const env = {
      HEATSINK_HOT_RPS: '1000000000',
      HEATSINK_SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
    }
    const [stopping, survivor] = [await world().startReplica(env), await world().startReplica(env)]
    const admin = redis.client()

    // An idle keep-alive connection, and a promotion whose body is still arriving.
    await new Promise<void>((resolve, reject) =>
      request({ host: '127.0.0.1', port: stopping.port, path: '/healthz', agent: keepAlive }, (response) => {
        response.resume()
        response.on('end', () => setImmediate(resolve))
      })
        .on('error', reject)
        .end(),
    )
    const idle = Object.values(keepAlive.freeSockets).flat()[0] as Socket
    expect(idle).toBeDefined()
    const idleClosed = new Promise<number>((resolve) => idle.once('close', () => resolve(performance.now())))
    const inFlight = heldPost(
      stopping.port,
      `/hotkeys/${encodeURIComponent(`${redis.namespace}:late`)}/promote`,
      JSON.stringify({ mitigation: 'local_cache' }),
      new HttpAgent({ keepAlive: true }),
    )
    await inFlight.started

    const now = Math.floor(Date.now() / WINDOW_MS) * WINDOW_MS
    const windows = [now - 2 * WINDOW_MS, now - WINDOW_MS]
    const keys = Array.from({ length: 300 }, (_, i) => `${redis.namespace}:k:${i}`)
    const burst = reportBurst({ agents: 500, agentPrefix: 'a', windows, keys, keysPerReport: 100 })
    const sending = sendReports(admin, names, burst.reports)
    await until(
      'replica-1 mid-batch',
      async () => (await pendingFor(admin, names, 'replica-1')) > 0,
      10_000,
      1,
    )
    const signalledAt = performance.now()
    stopping.kill('SIGTERM')

    expect((await idleClosed) - signalledAt).toBeLessThan(1000)
    await new Promise((resolve) => setTimeout(resolve, 300))
    inFlight.finish()
    expect(await inFlight.answer).toEqual({ status: 201, connection: 'close' })
    const exit = await stopping.exited
    expect(exit.code, stopping.output()).toBe(0)
    expect(exit.at - signalledAt).toBeLessThan(SHUTDOWN_TIMEOUT_MS + 500)
    console.log(`[faults] SIGTERM: exited ${Math.round(exit.at - signalledAt)} ms after the signal`)
    await sending

    // What the stopped replica had read was either acknowledged before it exited or claimed by the survivor.
    const leftBehind = await pendingFor(admin, names, 'replica-1')
    await until('every report acknowledged', async () => (await pendingReports(admin, names)) === 0, 15_000)
    if (leftBehind > 0) {
      expect(await survivor.metric('heatsink_ingest_claimed_total')).toBeGreaterThanOrEqual(leftBehind)
    }
    for (const [windowStart, sums] of burst.expected) {
      expect(await windowSums(admin, names, windowStart, keys)).toEqual(keys.map((key) => sums.get(key) ?? 0))
    }
    expect(await admin.xlen(names.deadLetterStream)).toBe(0)
  }, 60_000)
})
