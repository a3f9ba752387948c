import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { publishRegistry } from '@heatsink/agent/testing'
import { freePort, type StartedRedisProcess, startRedisProcess } from '@heatsink/devservices'
import { createNames } from '@heatsink/protocol'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createProxy } from '../src/index.js'
import { commandCalls, startProxy, waitFor } from './support/proxy-fixture.js'

// A redis-server whose TLS port is the only way the proxy reaches it (the plain port is for the test's own
// checks), with a certificate for 127.0.0.1 signed by a CA of the test's own.
let dir: string
let server: StartedRedisProcess
let tlsPort: number
let ca: Buffer

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'heatsink-proxy-tls-'))
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' })
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=heatsink test CA',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
  )
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\n')
  openssl(
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=127.0.0.1',
    '-keyout',
    'redis.key',
    '-out',
    'redis.csr',
  )
  openssl(
    'x509',
    '-req',
    '-in',
    'redis.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '1',
    '-extfile',
    'san.ext',
    '-out',
    'redis.crt',
  )
  ca = readFileSync(join(dir, 'ca.crt'))
  tlsPort = await freePort()
  server = await startRedisProcess({
    binary: 'redis-server',
    dir,
    service: 'redis',
    timeoutMs: 30_000,
    extraArgs: () => [
      '--tls-port',
      String(tlsPort),
      '--tls-cert-file',
      join(dir, 'redis.crt'),
      '--tls-key-file',
      join(dir, 'redis.key'),
      '--tls-ca-cert-file',
      join(dir, 'ca.crt'),
      '--tls-auth-clients',
      'no',
    ],
  })
}, 60_000)

afterAll(async () => {
  await server?.process.stop()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

describe('the proxy in front of a Redis reached over TLS (rediss://)', () => {
  it('relays commands and a large value, and serves a local_cache key from L1, all over TLS', async () => {
    const { client, namespace, proxy } = await startProxy(`rediss://127.0.0.1:${tlsPort}`, {
      backendTls: { ca },
    })
    const direct = new Redis({ port: server.port })
    try {
      const through = client()
      const value = randomBytes(8 * 1024 * 1024)
      expect(await through.set(`${namespace}:big`, value)).toBe('OK')
      expect((await direct.getBuffer(`${namespace}:big`))?.equals(value)).toBe(true)
      expect((await through.getBuffer(`${namespace}:big`))?.equals(value)).toBe(true)
      const key = `${namespace}:hot`
      await through.set(key, 'v1')
      await publishRegistry(direct, createNames(namespace), { key })
      await waitFor(() => proxy.agent.mitigation(key) === 'local_cache', 'the promotion')
      expect(await through.get(key)).toBe('v1')
      const gets = await commandCalls(direct, 'get')
      for (let i = 0; i < 100; i++) expect(await through.get(key)).toBe('v1')
      expect(await commandCalls(direct, 'get')).toBe(gets)
      // A write straight to Redis reaches the proxy's L1 through the agent's TLS connections too.
      await direct.set(key, 'v2')
      await waitFor(async () => (await through.get(key)) === 'v2', 'the invalidation')
    } finally {
      direct.disconnect()
    }
  })

  it('answers with an error, not a hang, when it cannot verify the server certificate', async () => {
    const { proxy, port } = await createProxy({ backend: `rediss://127.0.0.1:${tlsPort}`, port: 0 })
    const through = new Redis({ port, maxRetriesPerRequest: 0 })
    // ioredis's ready check meets the same error: the test watches the command's.
    through.on('error', () => {})
    try {
      await expect(through.get('any')).rejects.toThrow(/connection to redis lost .*certificate/)
    } finally {
      through.disconnect()
      await proxy.close(1000)
    }
  })
})
