import type { NodeStatus, NodesView } from '@heatsink/protocol'
import type { Redis } from 'ioredis'

/** GET /nodes of the aggregator at `base`. */
export async function getNodes(base: string): Promise<NodesView> {
  const response = await fetch(`${base}/nodes`)
  if (!response.ok) throw new Error(`GET /nodes answered ${response.status}`)
  return (await response.json()) as NodesView
}

/** Polls GET /nodes until `accept` holds for a view; resolves to that view. */
export async function nodesWhen(
  base: string,
  what: string,
  accept: (view: NodesView) => boolean,
  timeoutMs = 20_000,
): Promise<NodesView> {
  const deadline = Date.now() + timeoutMs
  let last: NodesView | undefined
  while (Date.now() < deadline) {
    last = await getNodes(base)
    if (accept(last)) return last
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`timed out waiting for ${what}; last GET /nodes: ${JSON.stringify(last)}`)
}

/** The node named `address` in `view`. */
export function nodeOf(view: NodesView, address: string): NodeStatus {
  const found = view.nodes.find((node) => node.node === address)
  if (found === undefined) throw new Error(`${address} is not in GET /nodes: ${JSON.stringify(view)}`)
  return found
}

/** One INFO field of `client`'s server, as a number. */
export async function infoNumber(client: Redis, field: string): Promise<number> {
  const info = await client.info()
  const line = info.split('\r\n').find((candidate) => candidate.startsWith(`${field}:`))
  if (line === undefined) throw new Error(`INFO has no ${field}`)
  return Number(line.slice(field.length + 1))
}

/** A rate from INFO counters, measured by the test itself over `ms`: what the node view is compared with. */
export async function infoRate(client: Redis, field: string, ms: number): Promise<number> {
  const first = await infoNumber(client, field)
  const started = performance.now()
  await new Promise((resolve) => setTimeout(resolve, ms))
  const second = await infoNumber(client, field)
  return ((second - first) * 1000) / (performance.now() - started)
}
