import { publishRegistry, registerSilently } from '@heatsink/agent/testing'
import { createNames, DEFAULT_NAMESPACE, encodeSnapshot, WIRE_VERSION } from '@heatsink/protocol'
import { Redis as IORedis } from 'ioredis'
import { afterAll, beforeAll, beforeEach } from 'vitest'
import { client, server } from './client.js'
import type { AgentRedis } from './clients/agent.js'
import { TEST_DATABASES, TEST_KEYS } from './keys.js'

/*
 * compat-agent-local-cache: before every test, every key of keys.ts is registered `local_cache` in the
 * Heatsink registry (default namespace) of each database in TEST_DATABASES on the private server, as the
 * control plane publishes it (@heatsink/agent/testing), and the test starts once the agents see it.
 *
 * helpers/global.ts runs FLUSHALL after every test, which removes the snapshot hash, so the registry is
 * written again each time, above every version this file published before: agents still open from earlier
 * tests (the vendored tests rarely disconnect their clients) ignore events at versions they already had. The
 * keys go into the snapshot without events (registerSilently); then one event registers a marker key unique
 * to this publication. An agent that has the marker has the whole snapshot (an agent one version behind
 * applies the event, one further behind reloads the snapshot), and a probe client per database, open for the
 * whole file, tells when its process agent, which every client of that database shares, has it. 650 keys as
 * 650 events would be decoded by every agent still open, before every test.
 */

const names = createNames(DEFAULT_NAMESPACE)
const WAIT_MS = 5000

let published = 0
const probes = new Map<number, AgentRedis>()

beforeAll(async () => {
  for (const db of TEST_DATABASES) {
    const probe = new client.Redis({ db }) as unknown as AgentRedis
    probes.set(db, probe)
    await probe.heatsink.ready()
  }
})

afterAll(() => {
  for (const probe of probes.values()) probe.disconnect()
})

beforeEach(async () => {
  const publishers = TEST_DATABASES.map((db) => new IORedis({ port: server.port, host: server.host, db }))
  try {
    const stored = await Promise.all(publishers.map((redis) => storedVersion(redis)))
    const from = Math.max(published, ...stored)
    const version = from + TEST_KEYS.length + 1
    const marker = `compat:registry-marker:${version}`
    await Promise.all(publishers.map((redis) => publish(redis, from, marker)))
    published = version
    for (const [db, probe] of probes) {
      await until(
        () => probe.heatsink.mitigation(marker) === 'local_cache',
        `the agent of database ${db} did not see registry version ${version} within ${WAIT_MS} ms`,
      )
    }
  } finally {
    for (const redis of publishers) redis.disconnect()
  }
})

async function storedVersion(redis: IORedis): Promise<number> {
  return Number((await redis.hget(names.registrySnapshotKey, 'version')) ?? 0)
}

/** Registers TEST_KEYS, then `marker`, at the versions after `from` (the snapshot is put at `from` first). */
async function publish(redis: IORedis, from: number, marker: string): Promise<void> {
  if (from > 0 && (await storedVersion(redis)) < from) {
    const snapshot = encodeSnapshot({
      v: WIRE_VERSION,
      kind: 'snapshot',
      version: from,
      at: Date.now(),
      entries: [],
    })
    await redis.hset(names.registrySnapshotKey, 'version', String(from), 'snapshot', snapshot)
  }
  await registerSilently(
    redis,
    names,
    ...TEST_KEYS.map((key) => ({ key, mitigation: 'local_cache' as const })),
  )
  await publishRegistry(redis, names, { key: marker, mitigation: 'local_cache' })
}

async function until(condition: () => boolean, message: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(message)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}
