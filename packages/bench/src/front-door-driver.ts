import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { pathToFileURL } from 'node:url'

/**
 * The drop-in front door of one build, driven over stdin so that its instructions can be counted per window
 * (instructions.bench.ts): `node --expose-gc front-door-driver.js <checkout> <redis url> <namespace>`, then one
 * line per window naming the workload, answered by a line `done`: `one` and `spread` are 6 batches of 1,000
 * concurrent autopipelined GETs, as front-door-pass-through sends them, of one key or spread over 10,000;
 * `awaited` is 1,500 GETs one after another over the 10,000 (one write and one reply each, so the work per
 * request is the same in every window). `gc` collects the heap between windows, so that no window pays for a
 * major collection of garbage an earlier one made.
 */
const [checkout, url, namespace] = process.argv.slice(2) as [string, string, string]
const agent = await import(pathToFileURL(join(checkout, 'packages/agent/dist/index.js')).href)
const redis = new agent.Redis(url, {
  enableAutoPipelining: true,
  // Under valgrind on a loaded machine the agent's connections take far longer than the default 10 s to be live.
  heatsink: { namespace, agentId: `bench-instructions-${process.pid}`, readyTimeoutMs: 300_000 },
})
await redis.heatsink.ready()
const keys = Array.from({ length: 10_000 }, (_, i) => `${namespace}:item:${i}`)
let next = 0

const nextKey = () => keys[next++ % keys.length] as string
const batches = (key: () => string) => async () => {
  for (let batch = 0; batch < 6; batch++) {
    await Promise.all(Array.from({ length: 1000 }, () => redis.get(key())))
  }
}
const workloads: Record<string, () => Promise<void>> = {
  one: batches(() => keys[0] as string),
  spread: batches(nextKey),
  awaited: async () => {
    for (let i = 0; i < 1500; i++) await redis.get(nextKey())
  },
  gc: async () => (globalThis as { gc?: () => void }).gc?.(),
}

process.stdout.write('ready\n')
for await (const line of createInterface({ input: process.stdin })) {
  const workload = workloads[line.trim()]
  if (workload === undefined) throw new Error(`unknown workload ${line}`)
  await workload()
  process.stdout.write('done\n')
}
