import type { NodesView } from '@heatsink/protocol'
import { describe, expect, it } from 'vitest'
import { fit, MAX_COLUMNS, renderSummary, renderView, type ViewState } from '../src/dashboard.js'

const empty: ViewState = {
  elapsedSeconds: 3,
  header: ['Dashboard: http://127.0.0.1:8080/'],
  entries: [],
  events: [],
  startedAt: 0,
  footer: '',
}

describe('the quickstart view', () => {
  it('prints no Events heading and no table heading before there is something under them', () => {
    expect(renderView(empty)).toBe('Dashboard: http://127.0.0.1:8080/\n\nRegistry: no hot key yet')
    expect(renderSummary(empty)).toBe('[+3s] Registry: no hot key yet')
    const withEvent = renderView({
      ...empty,
      events: [{ at: 6400, text: 'demo:post:42 promoted (auto): local_cache' }],
    })
    expect(withEvent.split('\n').slice(-2)).toEqual([
      'Events',
      '  [+6.4s] demo:post:42 promoted (auto): local_cache',
    ])
  })

  it('wraps long lines at spaces within 120 columns, and cuts a word longer than a line', () => {
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ')
    const wrapped = fit([words])
    expect(wrapped.length).toBeGreaterThan(1)
    expect(wrapped.every((line) => line.length <= MAX_COLUMNS)).toBe(true)
    expect(wrapped.slice(1).every((line) => line.startsWith('    '))).toBe(true)
    expect(wrapped.map((line) => line.trim()).join(' ')).toBe(words)
    const cut = fit(['x'.repeat(300)])
    expect(cut.every((line) => line.length <= MAX_COLUMNS)).toBe(true)
    expect(cut.join('').replace(/ /g, '')).toBe('x'.repeat(300))
  })
})

describe('the Redis nodes in the quickstart view', () => {
  const view: NodesView = {
    topology: 'standalone',
    sampledAt: 1,
    intervalMs: 1000,
    imbalance: 1,
    nodes: [
      {
        node: '127.0.0.1:6379',
        role: 'master',
        master: null,
        up: true,
        error: null,
        sampledAt: 1,
        figures: {
          opsPerSecond: 9123.4,
          cpuRatio: 0.412,
          usedMemoryBytes: 3 * 1024 * 1024,
          maxmemoryBytes: 0,
          connectedClients: 17,
          blockedClients: 0,
          keyspaceHitsPerSecond: 9000,
          keyspaceMissesPerSecond: 0,
          networkInBytesPerSecond: 1,
          networkOutBytesPerSecond: 1,
          evictedKeys: 0,
          evictedKeysPerSecond: 0,
          latency: [],
          replicationLagSeconds: null,
          replicationBehindBytes: null,
        },
        hotKeys: [
          {
            key: 'demo:post:42',
            state: 'registered',
            mitigation: 'local_cache',
            requestsPerSecond: 6000,
            redisOpsPerSecond: 0,
            shareOfNodeOps: 0,
            nodeOpsBefore: 15000,
            nodeOpsAfter: 9123.4,
          },
        ],
      },
    ],
  }

  it('shows each node with its load and the hot keys on it, under the registry, on screen and in the log', () => {
    const screen = renderView({ ...empty, nodes: view }).split('\n')
    expect(screen.slice(3)).toEqual([
      '',
      'Redis nodes (standalone, imbalance 1.00), sampled by the control plane every 1 s',
      '  NODE                   ROLE     OPS/S     CPU     MEMORY     CLIENTS  HOT KEYS (SHARE OF THE NODE OPS)',
      '  127.0.0.1:6379         master   9,123     41.2%   3.0 MB     17       demo:post:42 local_cache 0%',
    ])
    expect(renderSummary({ ...empty, nodes: view })).toContain('127.0.0.1:6379         master   9,123')
    // Before the first sample, nothing is said about nodes.
    expect(renderView({ ...empty, nodes: { ...view, nodes: [] } })).toBe(renderView(empty))
  })
})
