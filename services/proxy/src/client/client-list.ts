/** What CLIENT LIST and CLIENT INFO show of one client connection of the proxy. */
export interface ClientInfo {
  readonly id: number
  /** The client's address as `ip:port`, and the proxy's end of the connection. */
  readonly addr: string
  readonly laddr: string
  readonly name: Buffer | null
  readonly ageSeconds: number
  readonly idleSeconds: number
  readonly db: number
  readonly inMulti: boolean
  readonly blocked: boolean
  readonly subscribed: boolean
  /** The last command it sent, in lower case. */
  readonly command: string
  readonly user: string
  readonly resp: 2 | 3
}

/** One client connection of the proxy, as CLIENT LIST, KILL and UNBLOCK see it. */
export interface ProxyClient {
  readonly id: number
  info(): ClientInfo
  /**
   * The Redis id of the client's own backend connection, when it has one (a blocked client does); it settles once
   * Redis has answered the CLIENT ID sent ahead of the client's first blocking command.
   */
  backendId(): Promise<number | undefined>
  /** Closes the connection (CLIENT KILL), after `reply` when the client killed itself. */
  kill(reply?: Buffer): void
}

/**
 * One line of CLIENT LIST in Redis 7.0's format. Fields the proxy has no counterpart for (the file descriptor,
 * query and output buffer sizes, memory) are 0, or -1 as Redis writes an absent value; the subscription counts
 * are those of the connection's own view (the proxy relays a subscribed connection without counting channels).
 */
export function clientListLine(info: ClientInfo): string {
  let flags = ''
  if (info.inMulti) flags += 'x'
  if (info.blocked) flags += 'b'
  if (info.subscribed) flags += 'P'
  if (flags === '') flags = 'N'
  const name = info.name === null ? '' : info.name.toString('latin1')
  return (
    `id=${info.id} addr=${info.addr} laddr=${info.laddr} fd=-1 name=${name} age=${info.ageSeconds} ` +
    `idle=${info.idleSeconds} flags=${flags} db=${info.db} sub=0 psub=0 ssub=0 multi=${info.inMulti ? 0 : -1} ` +
    'qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r ' +
    `cmd=${info.command} user=${info.user} redir=-1 resp=${info.resp}\n`
  )
}

/** Redis's client types; the proxy's clients are all `normal`, or `pubsub` once subscribed. */
const CLIENT_TYPES: ReadonlySet<string> = new Set(['normal', 'master', 'replica', 'slave', 'pubsub'])

/** The type CLIENT LIST TYPE and CLIENT KILL TYPE match, or undefined for a name Redis does not know. */
export function clientType(name: string): string | undefined {
  const lower = name.toLowerCase()
  if (!CLIENT_TYPES.has(lower)) return undefined
  return lower === 'slave' ? 'replica' : lower
}

/** The type of one of the proxy's clients. */
export function typeOf(info: ClientInfo): string {
  return info.subscribed ? 'pubsub' : 'normal'
}
