import type { Aggregator } from '../../src/aggregator.js'

/**
 * The sum of the samples of `name` in Prometheus text whose labels include `labels`; 0 when there are none
 * (prom-client prints nothing for a labelled counter never incremented).
 */
export function sampleSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match === null || match[1] !== name) continue
    const found = new Map(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(([, k, v]) => [k, v] as const),
    )
    if (Object.entries(labels).every(([k, v]) => found.get(k) === v)) sum += Number(match[3])
  }
  return sum
}

/** GET /metrics of a running aggregator, as an operator's scraper sees it. */
export async function scrape(aggregator: Aggregator): Promise<string> {
  const reply = await aggregator.app.inject({ url: '/metrics' })
  return reply.body
}

/** GET /readyz of a running aggregator: the status code and the checks. */
export async function readiness(
  aggregator: Aggregator,
): Promise<{ statusCode: number; checks: Record<string, string> }> {
  const reply = await aggregator.app.inject({ url: '/readyz' })
  return { statusCode: reply.statusCode, checks: reply.json().checks }
}
