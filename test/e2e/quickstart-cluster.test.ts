import { describe, expect, it } from 'vitest'
import { listening, runQuickstart } from './support/quickstart-run.js'

describe('the quickstart with --cluster', () => {
  it('runs on a private 3-master Cluster, shows its three nodes and the viral key under one, and stops the Cluster', async () => {
    // No DATABASE_URL: the embedded PGlite; no REDIS_URL needed: the Cluster is the run's own.
    const { code, output } = await runQuickstart(['--cluster', '--seconds=12'])
    expect(code, output).toBe(0)
    const ports =
      /^Redis: a private 3-master Cluster \((127\.0\.0\.1:\d+), (127\.0\.0\.1:\d+), (127\.0\.0\.1:\d+)\)/m
        .exec(output)
        ?.slice(1)
    expect(ports, output).toHaveLength(3)
    expect(output).toContain('demo:post:42 was detected and mitigated.')
    // Every node table (one each five seconds): each master with its load, and the viral key, once it is
    // registered, under one master, always the same.
    const tables = output
      .split(/^Redis nodes \(cluster, imbalance [0-9.]+\), sampled by the control plane every 1 s$/m)
      .slice(1)
      .map((table) => table.split('\n').filter((line) => /^ {2}127\.0\.0\.1:\d+ /.test(line)))
    expect(tables.length, output).toBeGreaterThan(0)
    const owners = new Set<string>()
    for (const lines of tables) {
      expect(lines.map((line) => line.trim().split(/ +/)[0]).sort()).toEqual([...(ports as string[])].sort())
      for (const line of lines) expect(line).toMatch(/^ {2}\S+ +master +[0-9,]+ +[0-9.]+% /)
      const holding = lines.filter((line) => line.includes('demo:post:42 local_cache'))
      expect(holding.length).toBeLessThanOrEqual(1)
      for (const line of holding) owners.add(line.trim().split(/ +/)[0] as string)
    }
    expect([...owners], output).toHaveLength(1)
    // The Cluster was the run's own: nothing listens on its ports any more.
    for (const address of ports as string[]) {
      const port = Number(address.split(':')[1])
      const reachable = await listening(port)
      expect(reachable).toBe(false)
    }
  }, 90_000)
})
