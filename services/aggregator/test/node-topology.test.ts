import { describe, expect, it } from 'vitest'
import { imbalanceOf } from '../src/nodes/hot-key-placement.js'
import { figuresOf, readInfo } from '../src/nodes/node-figures.js'
import { ownerOf, parseClusterNodes } from '../src/nodes/node-topology.js'

// CLUSTER NODES of a 3-master Cluster with a replica each, as Redis 7.0 prints it: one master failed (its replica
// not promoted yet), a node still in handshake, a master importing a slot.
const CLUSTER_NODES = [
  'a1 127.0.0.1:7001@17001 myself,master - 0 0 1 connected 0-5460',
  'a2 127.0.0.1:7002@17002 master - 0 1700000000000 2 connected 5461-10922 [5461-<-a3]',
  'a3 127.0.0.1:7003@17003 master,fail - 1700000000000 1700000000000 3 disconnected 10923-16383',
  'b1 127.0.0.1:7004@17004 slave a1 0 1700000000000 1 connected',
  'b2 127.0.0.1:7005@17005,replica.example slave a2 0 1700000000000 2 connected',
  'b3 127.0.0.1:7006@17006 slave a3 0 1700000000000 3 connected',
  'c1 :0@0 handshake,noaddr - 0 0 0 disconnected',
  '',
].join('\n')

describe('the node topology', () => {
  it('reads every master and replica from CLUSTER NODES, with their slots and masters', () => {
    const nodes = parseClusterNodes(CLUSTER_NODES)
    expect(nodes).toEqual([
      { node: '127.0.0.1:7001', role: 'master', master: null, slots: [[0, 5460]] },
      { node: '127.0.0.1:7002', role: 'master', master: null, slots: [[5461, 10922]] },
      { node: '127.0.0.1:7003', role: 'master', master: null, slots: [[10923, 16383]] },
      { node: '127.0.0.1:7004', role: 'replica', master: '127.0.0.1:7001', slots: [] },
      { node: '127.0.0.1:7005', role: 'replica', master: '127.0.0.1:7002', slots: [] },
      { node: '127.0.0.1:7006', role: 'replica', master: '127.0.0.1:7003', slots: [] },
    ])
    const topology = { kind: 'cluster' as const, nodes }
    expect(ownerOf(topology, 0)).toBe('127.0.0.1:7001')
    expect(ownerOf(topology, 5461)).toBe('127.0.0.1:7002')
    expect(ownerOf(topology, 16383)).toBe('127.0.0.1:7003')
  })

  it('works out rates between two INFO answers, and none across a restart', () => {
    const info = (commands: number, cpu: number, hits: number) =>
      [
        '# Stats',
        `total_commands_processed:${commands}`,
        `keyspace_hits:${hits}`,
        'keyspace_misses:10',
        'total_net_input_bytes:1000',
        'total_net_output_bytes:2000',
        'evicted_keys:3',
        '# CPU',
        `used_cpu_sys:${cpu / 2}`,
        `used_cpu_user:${cpu / 2}`,
        '# Replication',
        'role:master',
        'master_repl_offset:500',
        'slave0:ip=127.0.0.1,port=7004,state=online,offset=400,lag=1',
        '# Commandstats',
        'cmdstat_get:calls=90,usec=100,usec_per_call=1.1,rejected_calls=0,failed_calls=0',
        'cmdstat_set:calls=10,usec=20,usec_per_call=2.0,rejected_calls=0,failed_calls=0',
        '# Latencystats',
        'latency_percentiles_usec_set:p50=2.003,p99=5.007,p99.9=9.011',
        'latency_percentiles_usec_get:p50=1.003,p99=3.007,p99.9=7.007',
      ].join('\r\n')
    const first = readInfo(info(1000, 10, 500), 0)
    const second = readInfo(info(3000, 10.5, 1500), 2000)
    const figures = figuresOf('127.0.0.1:7001', second, first, undefined)
    expect(figures).toMatchObject({
      opsPerSecond: 1000,
      cpuRatio: 0.25,
      keyspaceHitsPerSecond: 500,
      keyspaceMissesPerSecond: 0,
      evictedKeys: 3,
      replicationLagSeconds: null,
    })
    expect(figures.latency.map((command) => command.command)).toEqual(['get', 'set'])
    expect(figures.latency[0]).toEqual({
      command: 'get',
      calls: 90,
      p50Usec: 1.003,
      p99Usec: 3.007,
      p999Usec: 7.007,
    })
    expect(figuresOf('n', first, second, undefined).opsPerSecond).toBeNull()

    // A replica's lag and how far behind it is come from its master's listing of it.
    const replica = readInfo('role:slave\r\nslave_repl_offset:400\r\n', 2000)
    expect(figuresOf('127.0.0.1:7004', replica, undefined, second)).toMatchObject({
      replicationLagSeconds: 1,
      replicationBehindBytes: 100,
    })
  })

  it('measures the imbalance over the masters that answered', () => {
    const node = (role: 'master' | 'replica', ops: number | null, up = true) => ({
      node: 'n',
      role,
      master: null,
      up,
      error: null,
      sampledAt: 0,
      figures: ops === null ? null : ({ opsPerSecond: ops } as never),
      hotKeys: [],
    })
    expect(
      imbalanceOf([node('master', 900), node('master', 50), node('master', 50), node('replica', 5000)]),
    ).toBe(2.7)
    expect(imbalanceOf([node('master', 100), node('master', 1000, false)])).toBe(1)
    expect(imbalanceOf([node('master', null)])).toBeNull()
  })
})
