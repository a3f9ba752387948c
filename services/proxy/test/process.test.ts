// Longer than 300 lines: every case starts the built proxy as a child process (main.js) and shares this file's
// helpers for starting, waiting and reading a process's memory.
import { type ChildProcess, spawn } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { connect } from 'node:net'
import { publishRegistry } from '@heatsink/agent/testing'
import { freePort, isPortFree } from '@heatsink/devservices'
import { createNames } from '@heatsink/protocol'
import { REPO_ROOT, testNamespace, useTestRedis } from '@heatsink/test'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { usePrivateRedis, waitFor } from './support/proxy-fixture.js'

const redis = usePrivateRedis()
// Another server than the backend, for HEATSINK_CONTROL_REDIS_URL.
const shared = useTestRedis()
// The container image runs exactly this (deploy/proxy.Dockerfile).
const PROXY_COMMAND = ['node', 'services/proxy/dist/main.js'] as const

const children: ChildProcess[] = []
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
})

function start(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const [command, ...args] = PROXY_COMMAND
  const child = spawn(command, args, { cwd: REPO_ROOT, env: { PATH: process.env.PATH, ...env } })
  children.push(child)
  let output = ''
  child.stdout?.setEncoding('utf8').on('data', (text: string) => {
    output += text
  })
  child.stderr?.setEncoding('utf8').on('data', (text: string) => {
    output += text
  })
  return { child, output: () => output }
}

/** Starts the proxy on free ports in front of the private Redis, with a namespace of its own and `env` added. */
async function startServing(env: Record<string, string>, workers = 1) {
  const port = await freePort()
  const metricsPort = await freeRun(workers)
  const namespace = testNamespace()
  const started = start({
    REDIS_URL: redis().url,
    PORT: String(port),
    HEATSINK_PROXY_METRICS_PORT: String(metricsPort),
    HEATSINK_NAMESPACE: namespace,
    ...env,
  })
  return { ...started, port, metricsPort, namespace }
}

/**
 * startServing, then waits for the agent to be ready. A port found free can be taken by another test file before the
 * proxy binds it (the proxy then exits with EADDRINUSE): that start is retried on new ports; any other exit or a
 * start slower than 15 s fails with what the proxy wrote.
 */
async function startReady(env: Record<string, string>) {
  for (let attempt = 1; ; attempt++) {
    const started = await startServing(env)
    const ready = () => started.output().includes('"msg":"agent ready"')
    await waitFor(() => ready() || started.child.exitCode !== null, 'the proxy to be ready', 15_000).catch(
      (error: Error) => {
        throw new Error(`${error.message}; the proxy wrote:\n${started.output()}`)
      },
    )
    if (ready()) return started
    if (!started.output().includes('EADDRINUSE') || attempt === 3)
      throw new Error(`the proxy exited with code ${started.child.exitCode}:\n${started.output()}`)
  }
}

// Worker i serves its metrics on metricsPort + i: a free port whose next ones are free too, since a port taken by
// another test in the same run would stop that worker from starting.
async function freeRun(length: number): Promise<number> {
  for (;;) {
    const first = await freePort()
    let free = true
    for (let i = 1; i < length && free; i++) free = await isPortFree(first + i)
    if (free) return first
  }
}

/** A figure of /proc/<pid>/status in bytes (VmRSS now, VmHWM the peak so far). */
function memory(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'))
  return Number(line?.[1]) * 1024
}

describe('node services/proxy/dist/main.js', () => {
  it('refuses a bad environment with a clear message and exit code 2', async () => {
    const { child, output } = start({
      PORT: 'abc',
      REDIS_URL: redis().url,
      HEATSINK_CONTROL_REDIS_URL: 'memcached://heatsink:11211',
    })
    const [code] = await once(child, 'exit')
    expect(code).toBe(2)
    expect(output()).toMatch(/^heatsink proxy: invalid configuration: /)
    expect(output()).toContain("PORT: expected an integer port from 0 to 65535, got 'abc'")
    expect(output()).toContain(
      "HEATSINK_CONTROL_REDIS_URL: expected a redis://, rediss://, redis+sentinel:// or rediss+sentinel:// URL, got 'memcached://heatsink:11211'",
    )
  })

  it("with HEATSINK_CONTROL_REDIS_URL reports and subscribes there, leaving the backend its clients' keys only", async () => {
    const { namespace, url } = shared()
    const agentId = `proxy-control-${process.pid}`
    const { port } = await startReady({
      HEATSINK_CONTROL_REDIS_URL: url,
      HEATSINK_NAMESPACE: namespace,
      HEATSINK_AGENT_ID: agentId,
    })
    const client = new Redis({ port, maxRetriesPerRequest: 0 })
    client.on('error', () => {})
    await client.set(`${namespace}:k`, 'v')
    expect(await client.get(`${namespace}:k`)).toBe('v')

    const onControl = shared().client()
    await waitFor(
      async () => (await onControl.type(createNames(namespace).reportStreamFor(agentId))) === 'stream',
      'a report on the control Redis',
    )
    expect(await onControl.client('LIST')).toContain(` name=heatsink:sub:${agentId} `)
    const backend = new Redis(redis().url)
    try {
      expect(await backend.keys(`${namespace}:*`)).toEqual([`${namespace}:k`])
    } finally {
      backend.disconnect()
      client.disconnect()
    }
  })

  it('serves RESP, /healthz and /metrics, and drains on SIGTERM: a reply in flight is delivered, then exit 0', async () => {
    const { child, output, port, metricsPort, namespace } = await startReady({
      HEATSINK_SHUTDOWN_TIMEOUT_MS: '8000',
    })
    const client = new Redis({ port, maxRetriesPerRequest: 0 })
    client.on('error', () => {})
    await client.set(`${namespace}:k`, 'v')
    expect(await client.get(`${namespace}:k`)).toBe('v')

    const health = await fetch(`http://127.0.0.1:${metricsPort}/healthz`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: 'ok', clients: 1 })
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
    expect(metrics).toContain('heatsink_proxy_commands_total{command="get"} 1')
    expect(metrics).toContain('heatsink_proxy_clients 1')
    // One request in 32 is timed for the backend latency histogram.
    for (let i = 0; i < 64; i++) await client.set(`${namespace}:k${i}`, 'v')
    const later = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
    const timed = /^heatsink_proxy_backend_latency_seconds_count (\d+)$/m.exec(later)
    expect(Number(timed?.[1])).toBeGreaterThanOrEqual(2)

    // A blocked client's reply arrives during the drain; then the proxy closes the connection and exits.
    const blocked = client.blpop(`${namespace}:q`, 2)
    await new Promise((resolve) => setTimeout(resolve, 200))
    child.kill('SIGTERM')
    const pusher = new Redis(redis().url)
    await pusher.rpush(`${namespace}:q`, 'last')
    expect(await blocked).toEqual([`${namespace}:q`, 'last'])
    const [code] = await once(child, 'exit')
    expect(code, output()).toBe(0)
    expect(output()).toContain('"msg":"stopped"')
    pusher.disconnect()
    client.disconnect()
  })

  it('bounds its L1 by HEATSINK_L1_MAX_MB: a hot value too large is answered from Redis and shown in /metrics', async () => {
    // 1 MB for replies, and at most an eighth of that (128 KiB) for one key's.
    const { port, metricsPort, namespace } = await startReady({ HEATSINK_L1_MAX_MB: '1' })
    const admin = new Redis(redis().url)
    const client = new Redis({ port, maxRetriesPerRequest: 0 })
    try {
      const small = `${namespace}:small`
      const large = `${namespace}:large`
      await admin.set(small, 'fits')
      await admin.set(large, 'L'.repeat(200_000))
      await publishRegistry(admin, createNames(namespace), { key: small }, { key: large })
      const metric = async (name: string) => {
        const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
        return Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN)
      }
      // Reads until the promotion has reached the proxy and its L1 answers the small key.
      await waitFor(async () => {
        expect(await client.get(small)).toBe('fits')
        return (await metric('heatsink_proxy_l1_served_total')) > 0
      }, 'the small key served from L1')
      for (let i = 0; i < 5; i++) expect(await client.get(large)).toBe('L'.repeat(200_000))
      expect(await metric('heatsink_proxy_agent_l1_too_large_total')).toBeGreaterThanOrEqual(5)
      const bytes = await metric('heatsink_proxy_agent_l1_bytes')
      expect(bytes).toBeGreaterThan(0)
      expect(bytes).toBeLessThanOrEqual(1024 * 1024)
    } finally {
      admin.disconnect()
      client.disconnect()
    }
  })

  it('with HEATSINK_PROXY_WORKERS=2 runs two workers on one port, each its own agent, and stops both on SIGTERM', async () => {
    const { child, output, port, metricsPort } = await startServing(
      { HEATSINK_AGENT_ID: 'multi', HEATSINK_PROXY_WORKERS: '2' },
      2,
    )
    await waitFor(
      () => output().split('"msg":"listening"').length === 3,
      'both workers to listen',
      20_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; the proxy wrote:\n${output()}`)
    })
    const clients = Array.from({ length: 8 }, () => new Redis({ port, maxRetriesPerRequest: 0 }))
    for (const [i, client] of clients.entries()) expect(await client.echo(String(i))).toBe(String(i))
    const admin = new Redis(redis().url)
    await waitFor(
      async () => {
        const names = (await admin.client('LIST')) as string
        return names.includes('heatsink:report:multi-0') && names.includes('heatsink:report:multi-1')
      },
      'both workers’ agents on Redis',
      20_000,
    )
    for (const offset of [0, 1]) {
      await waitFor(
        async () => (await fetch(`http://127.0.0.1:${metricsPort + offset}/healthz`)).status === 200,
        `worker ${offset} to be healthy`,
        20_000,
      )
    }
    for (const client of clients) client.disconnect()
    child.kill('SIGTERM')
    const [code] = await once(child, 'exit')
    expect(code, output()).toBe(0)
    admin.disconnect()
  })

  it("relays a 512 MB value (Redis' largest) both ways holding it at most once: the proxy's peak RSS grows by less than 1.5x the value", async () => {
    const { child, port, namespace } = await startReady({})
    const size = 512 * 1024 * 1024
    // A random 64 KiB block repeated: compared by digest, so the test holds the value once too.
    const block = randomBytes(64 * 1024)
    const value = Buffer.allocUnsafe(size)
    for (let at = 0; at < size; at += block.length) block.copy(value, at)
    const digest = createHash('sha256').update(value).digest('hex')
    const pid = child.pid as number
    const before = memory(pid, 'VmRSS')
    const socket = connect({ port, host: '127.0.0.1' })
    children.push({ kill: () => socket.destroy(), exitCode: null } as unknown as ChildProcess)
    await once(socket, 'connect')
    const key = `${namespace}:huge`
    socket.write(`*3\r\n$3\r\nSET\r\n$${key.length}\r\n${key}\r\n$${size}\r\n`)
    socket.write(value)
    socket.write('\r\n')
    expect((await readReply(socket, () => {})).toString()).toBe('+OK\r\n')
    const afterSet = memory(pid, 'VmHWM')
    socket.write(`*2\r\n$3\r\nGET\r\n$${key.length}\r\n${key}\r\n`)
    const hash = createHash('sha256')
    let received = 0
    const header = await readReply(socket, (bytes) => {
      hash.update(bytes)
      received += bytes.length
    })
    expect(header.toString()).toBe(`$${size}\r\n`)
    expect(received).toBe(size)
    expect(hash.digest('hex')).toBe(digest)
    const peak = memory(pid, 'VmHWM')
    console.log(
      `512 MB value: proxy RSS ${(before / 2 ** 20).toFixed(0)} MiB before, peak ${(afterSet / 2 ** 20).toFixed(0)} MiB after SET, ${(peak / 2 ** 20).toFixed(0)} MiB after GET`,
    )
    expect(peak - before).toBeLessThan(size * 1.5)
  }, 120_000)
})

/**
 * Reads one reply from `socket`: a status line whole, or a bulk string's header line with its payload streamed to
 * `onPayload` (never gathered here), resolving with the first line once the whole reply has arrived.
 */
function readReply(socket: import('node:net').Socket, onPayload: (bytes: Buffer) => void): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0)
    let left = -1
    const done = () => {
      socket.off('data', onData)
      resolve(head)
    }
    const onData = (chunk: Buffer) => {
      let rest = chunk
      if (left < 0) {
        head = Buffer.concat([head, chunk])
        const end = head.indexOf('\r\n')
        if (end < 0) return
        rest = head.subarray(end + 2)
        head = head.subarray(0, end + 2)
        if (head[0] !== 36) return done()
        left = Number(head.subarray(1, end).toString()) + 2
      }
      const payload = rest.subarray(0, Math.max(0, Math.min(rest.length, left - 2)))
      if (payload.length > 0) onPayload(payload)
      left -= rest.length
      if (left <= 0) done()
    }
    socket.on('data', onData)
    socket.once('error', reject)
    socket.once('close', () =>
      reject(new Error(`the proxy closed the connection (first line ${JSON.stringify(head.toString())})`)),
    )
  })
}
