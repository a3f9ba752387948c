import type { ClusterNode } from '@heatsink/devservices'
import { createNames, redisClusterSlot } from '@heatsink/protocol'
import { testNamespace } from '@heatsink/test'
import { Cluster as PlainCluster } from 'ioredis'
import { expect } from 'vitest'
import { Cluster } from '../../src/index.js'
import { publishRegistry } from '../../src/testing.js'
import { waitFor } from './helpers.js'

/** What clusterWithHotKey made. */
export interface ClusterHotKey {
  /** A Heatsink Cluster client, and a plain one beside it. */
  cluster: Cluster
  plain: PlainCluster
  /** local_cache, with the value 'value' in L1. */
  key: string
  /** The master that owns the key's slot. */
  owner: { host: string; port: number }
}

/**
 * Two Cluster clients on `nodes` (opened through `ready`, which closes them after the test) and a key set to
 * 'value' and promoted local_cache, filled once through its master's tracking connection and then written, so
 * that the connection is up and the next read fills again. Fills never time out here (l1.fillTimeoutMs is a minute): what
 * settles a read that waits on one is the loss of its connection.
 */
export async function clusterWithHotKey(
  nodes: ClusterNode[],
  ready: <T extends Cluster | PlainCluster>(client: T) => Promise<T>,
): Promise<ClusterHotKey> {
  const namespace = testNamespace()
  const plain = await ready(new PlainCluster(nodes))
  const cluster = await ready(new Cluster(nodes, { heatsink: { namespace, l1: { fillTimeoutMs: 60_000 } } }))
  await cluster.heatsink.ready()
  const key = `${namespace}:hot`
  await plain.set(key, 'value')
  await publishRegistry(plain, createNames(namespace), { key })
  await waitFor(() => cluster.heatsink.mitigation(key) === 'local_cache', 'the promotion')
  await waitFor(async () => {
    expect(await cluster.get(key)).toBe('value')
    return cluster.heatsink.stats().l1Entries >= 1
  }, 'a fill through the master')
  await plain.set(key, 'value')
  await waitFor(() => cluster.heatsink.stats().l1Entries === 0, 'the entry invalidated')
  const [host, port] = (plain.slots[redisClusterSlot(key)]?.[0] ?? '').split(':')
  return { cluster, plain, key, owner: { host: host ?? '', port: Number(port) } }
}
