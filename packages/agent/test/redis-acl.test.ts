import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ensureRedis, freePort, type RunningService, ServiceUnavailableError } from '@heatsink/devservices'
import { createNames } from '@heatsink/protocol'
import { REPO_ROOT } from '@heatsink/test'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgent } from '../src/index.js'
import { publishRegistry } from '../src/testing.js'
import { captureLog, waitFor } from './support/helpers.js'

// deploy/redis-acl.conf, loaded into a private redis-server: users are server-wide, so the shared server must
// not get them. The file is written for the default namespace and application keys under `app:`.
const ACL_FILE = join(REPO_ROOT, 'deploy', 'redis-acl.conf')
const names = createNames('heatsink')
const REGISTRY_KEY = 'acl-test-registry-key-0123456789abcdef'

/** The file's users: an ACL file has one `user <name> <rules...>` per line and nothing else (no comments). */
function aclUsers(): Map<string, string[]> {
  const users = new Map<string, string[]>()
  for (const line of readFileSync(ACL_FILE, 'utf8').split('\n')) {
    if (line.trim() === '') continue
    const [word, name, ...rules] = line.trim().split(/\s+/)
    expect(word, line).toBe('user')
    users.set(name as string, rules)
  }
  return users
}

const password = (user: string) =>
  aclUsers()
    .get(user)
    ?.find((rule) => rule.startsWith('>'))
    ?.slice(1)

let server: RunningService | undefined
let unavailable = ''
const clients: Redis[] = []

function connect(user: string): Redis {
  const client = new Redis(server?.url ?? '', {
    username: user,
    password: password(user) ?? '',
    maxRetriesPerRequest: 1,
  })
  clients.push(client)
  return client
}

beforeAll(async () => {
  try {
    server = await ensureRedis({ url: `redis://127.0.0.1:${await freePort()}` })
  } catch (error) {
    // Only where redis-server is not installed (Redis from a container): no private server for users.
    if (!(error instanceof ServiceUnavailableError)) throw error
    unavailable = error.message
    return
  }
  // What ACL LOAD does with each line. `default off` is left out (asserted below) so this test's own
  // connections, and the server's shutdown, keep working.
  const admin = new Redis(server.url)
  clients.push(admin)
  for (const [user, rules] of aclUsers()) {
    if (user !== 'default') await admin.acl('SETUSER', user, 'reset', ...rules)
  }
})

afterAll(async () => {
  for (const client of clients) client.disconnect()
  await server?.stop()
})

describe('deploy/redis-acl.conf', () => {
  it('turns the all-powerful default user off', () => {
    expect(aclUsers().get('default')).toEqual(['off'])
  })

  it('lets an agent append reports and publish invalidations, but not publish registry events or write the snapshot', async (context) => {
    if (server === undefined) return context.skip(`no private redis-server: ${unavailable}`)
    const agent = connect('heatsink-agent')
    await expect(agent.publish(names.registryChannel, 'forged')).rejects.toThrow(/NOPERM/)
    await expect(agent.hset(names.registrySnapshotKey, 'version', '99')).rejects.toThrow(/NOPERM/)
    await expect(agent.del(names.registrySnapshotKey)).rejects.toThrow(/NOPERM/)
    await expect(
      agent.eval(`return redis.call('PUBLISH', KEYS[1], 'x')`, 1, names.registryChannel),
    ).rejects.toThrow(/publish|NOPERM/i)
    await expect(agent.xadd(names.deadLetterStream, '*', 'm', 'x')).rejects.toThrow(/NOPERM/)

    const stream = names.reportStreamFor('agent-1')
    const appended = await agent.multi().xadd(stream, '*', 'm', 'report').pexpire(stream, 300_000).exec()
    expect(appended?.map(([error]) => error)).toEqual([null, null])
    expect(await agent.hget(names.registrySnapshotKey, 'version')).toBeNull()
    expect(await agent.publish(names.invalidationChannel, 'x')).toBe(0)
    expect(await agent.publish(`${names.namespace}:filled`, 'x')).toBe(0)
    expect(await agent.set('app:k', 'v')).toBe('OK')
    expect(await agent.get('app:k')).toBe('v')
  })

  it('lets the aggregator publish registry events and write the snapshot', async (context) => {
    if (server === undefined) return context.skip(`no private redis-server: ${unavailable}`)
    const aggregator = connect('heatsink-aggregator')
    expect(await aggregator.publish(names.registryChannel, 'x')).toBe(0)
    expect(await aggregator.hset(`${names.namespace}:scratch`, 'version', '0')).toBe(1)
    expect(await aggregator.xlen(names.reportStreamFor('agent-1'))).toBeGreaterThanOrEqual(0)
  })

  it('is enough for a whole agent: it follows the registry the aggregator user publishes, and reports', async (context) => {
    if (server === undefined) return context.skip(`no private redis-server: ${unavailable}`)
    const url = new URL(server.url)
    url.username = 'heatsink-agent'
    url.password = password('heatsink-agent') ?? ''
    const capture = captureLog()
    const agent = createAgent({
      log: capture.log,
      redis: url.toString(),
      agentId: 'acl-agent',
      registryKey: REGISTRY_KEY,
      windowMs: 100,
    })
    try {
      await agent.ready()
      const aggregator = connect('heatsink-aggregator')
      await connect('heatsink-agent').set('app:hot', 'value')
      await publishRegistry(aggregator, { names, registryKey: REGISTRY_KEY }, { key: 'app:hot' })
      await waitFor(() => agent.mitigation('app:hot') === 'local_cache', 'the signed promotion')
      // Filled through the tracking connection, so CLIENT TRACKING and the redirect passed the ACL.
      await waitFor(() => agent.stats().l1Entries === 1, 'L1 filled')
      expect(await agent.get('app:hot')).toBe('value')
      expect(agent.stats().l1Hits).toBe(1)
      await agent.set('app:hot', 'new')
      expect(await agent.get('app:hot')).toBe('new')
      // getOrLoad: its lease scripts on heatsink:lease:* and the fill broadcast on the filled channel.
      expect(await agent.getOrLoad('app:loaded', async () => 'loaded', { ttlSeconds: 60 })).toBe('loaded')
      await waitFor(() => agent.stats().reportsSent > 0, 'a report')
      expect(agent.stats()).toMatchObject({ badMessages: 0, forgedMessages: 0, invalidationChannelUp: true })
      // Anything the ACL refused would have been logged as a warning or an error.
      expect(capture.lines.filter((line) => line.level === 'warn' || line.level === 'error')).toEqual([])
    } finally {
      await agent.close()
    }
  })
})
