// Reading Redis's INFO text: the agent learns a primary's replicas from it, the aggregator samples every node's
// load from it. INFO is `field:value` lines under `# Section` headings, CRLF-terminated.

/** Every `field:value` line of an INFO reply (all sections); later duplicates win. */
export function parseInfo(info: string): Map<string, string> {
  const fields = new Map<string, string>()
  for (const raw of info.split('\n')) {
    const line = raw.trimEnd()
    if (line === '' || line.startsWith('#')) continue
    const colon = line.indexOf(':')
    if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1))
  }
  return fields
}

/** `a=1,b=2` (the value of a `slaveN`, `cmdstat_x` or `latency_percentiles_usec_x` line) as a map. */
export function parseInfoPairs(value: string): Map<string, string> {
  const pairs = new Map<string, string>()
  for (const pair of value.split(',')) {
    const equals = pair.indexOf('=')
    if (equals > 0) pairs.set(pair.slice(0, equals), pair.slice(equals + 1))
  }
  return pairs
}

/** A replica as its primary's INFO replication lists it (`slaveN:ip=...,port=...,state=...,offset=...,lag=...`). */
export interface InfoReplica {
  /** host:port as the primary sees it. */
  readonly address: string
  /** `online` once synced; `wait_bgsave`, `send_bulk` while syncing. */
  readonly state: string
  /** The replication offset the replica last acknowledged. */
  readonly offset: number
  /** Seconds since the replica's last acknowledgement (replicas acknowledge every second). */
  readonly lagSeconds: number
}

/** Every replica an INFO replication section lists, online or not. */
export function parseInfoReplicaLines(info: string): InfoReplica[] {
  const replicas: InfoReplica[] = []
  for (const [field, value] of parseInfo(info)) {
    if (!/^slave\d+$/.test(field)) continue
    const pairs = parseInfoPairs(value)
    replicas.push({
      address: `${pairs.get('ip')}:${pairs.get('port')}`,
      state: pairs.get('state') ?? '',
      offset: Number(pairs.get('offset') ?? 0),
      lagSeconds: Number(pairs.get('lag') ?? 0),
    })
  }
  return replicas
}
