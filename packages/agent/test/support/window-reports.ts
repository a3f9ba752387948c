import { createNames, decodeReport, STREAM_FIELD, type WindowReport } from '@heatsink/protocol'
import type { Redis } from 'ioredis'

/** Every report `agentId` has written to its stream in `namespace`, oldest first. */
export async function windowReports(
  client: Redis,
  namespace: string,
  agentId: string,
): Promise<WindowReport[]> {
  const entries = await client.xrange(createNames(namespace).reportStreamFor(agentId), '-', '+')
  return entries
    .map(([, fields]) => decodeReport(fields[fields.indexOf(STREAM_FIELD) + 1] as string))
    .filter((report) => report.agentId === agentId)
}
