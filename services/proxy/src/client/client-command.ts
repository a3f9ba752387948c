import { errorReply } from '../resp/reply-codec.js'
import { clientListLine, clientType, type ProxyClient, typeOf } from './client-list.js'
import { NULL, OK, unsupported, wrongArity } from './redis-replies.js'

/** What CLIENT needs of the session that received it. */
export interface ClientCommandHost {
  readonly resp3: boolean
  name: Buffer | null
  /** This client, as the others see it. */
  readonly self: ProxyClient
  /** Every client connection of this proxy process. */
  readonly clients: Iterable<ProxyClient>
  reply(bytes: Buffer): void
  /**
   * Sends `argv` to Redis once it settles and relays Redis's reply, in this client's order of replies; an argv
   * that settles undefined is answered 0.
   */
  forward(argv: Promise<readonly (Buffer | string)[] | undefined>): void
}

/**
 * The CLIENT subcommands that act on a connection, each mapped to the client's own view: the proxy's client
 * connections (ids, names, CLIENT LIST and INFO in Redis's format, KILL and UNBLOCK of the proxy's clients),
 * never the proxy's shared or internal connections to Redis. Subcommands about the whole server's clients or a
 * connection's reply stream are refused with the reason. Others (HELP, unknown names) go to Redis for its answer.
 */
export const CLIENT_SUBCOMMANDS: ReadonlySet<string> = new Set([
  'setname',
  'getname',
  'id',
  'info',
  'list',
  'kill',
  'unblock',
  'trackinginfo',
  'getredir',
  'tracking',
  'caching',
  'reply',
  'no-evict',
  'no-touch',
  'pause',
  'unpause',
  'setinfo',
])

// Why each refused subcommand cannot be carried through the proxy.
const REFUSED: ReadonlyMap<string, string> = new Map([
  ['tracking', "the proxy shares backend connections; Heatsink keeps hot keys in the proxy's own L1 instead"],
  ['caching', "the proxy shares backend connections; Heatsink keeps hot keys in the proxy's own L1 instead"],
  ['no-evict', "client eviction acts on Redis's connections, which the proxy's clients share"],
  ['no-touch', "the proxy's clients share backend connections"],
  ['pause', "it would pause the proxy's own connections to Redis too; run it on Redis"],
  ['unpause', "it would unpause the proxy's own connections to Redis too; run it on Redis"],
  ['setinfo', "the proxy's clients share backend connections"],
])

/** Runs `CLIENT <args>` for `host`; `args[0]` is a subcommand of CLIENT_SUBCOMMANDS. */
export function runClientCommand(host: ClientCommandHost, args: readonly Buffer[]): void {
  const sub = (args[0] as Buffer).toString().toLowerCase()
  const refused = REFUSED.get(sub)
  if (refused !== undefined) {
    host.reply(unsupported(`CLIENT ${sub.toUpperCase()}`, refused))
    return
  }
  switch (sub) {
    case 'setname': {
      const name = args[1]
      if (args.length !== 2 || name === undefined) host.reply(wrongArity('client|setname'))
      else if (!validClientName(name)) host.reply(BAD_NAME)
      else {
        host.name = name.length === 0 ? null : name
        host.reply(OK)
      }
      return
    }
    case 'getname':
      host.reply(host.name === null ? NULL : bulk(host.name))
      return
    case 'id':
      host.reply(Buffer.from(`:${host.self.id}\r\n`))
      return
    case 'info':
      host.reply(text(clientListLine(host.self.info()), host.resp3))
      return
    case 'list':
      host.reply(clientList(host, args))
      return
    case 'kill': {
      const reply = clientKill(host, args)
      // A client that killed itself was answered as it was closed.
      if (reply !== undefined) host.reply(reply)
      return
    }
    case 'unblock':
      clientUnblock(host, args)
      return
    case 'reply':
      // The session silenced the replies as it received the request (replyMode); ON's OK is the one heard.
      host.reply(replyMode(args) === undefined ? SYNTAX_ERROR : OK)
      return
    case 'getredir':
      host.reply(Buffer.from(':-1\r\n'))
      return
    default:
      // trackinginfo: tracking is never on through the proxy.
      host.reply(host.resp3 ? TRACKING_OFF_RESP3 : TRACKING_OFF)
  }
}

// CLIENT LIST [TYPE type] [ID id [id ...]]
function clientList(host: ClientCommandHost, args: readonly Buffer[]): Buffer {
  let keep: (client: ProxyClient) => boolean = () => true
  const option = args[1]?.toString().toLowerCase()
  if (option === 'type' && args.length === 3) {
    const type = clientType((args[2] as Buffer).toString())
    if (type === undefined) return errorReply(`ERR Unknown client type '${(args[2] as Buffer).toString()}'`)
    keep = (client) => typeOf(client.info()) === type
  } else if (option === 'id' && args.length >= 3) {
    const ids = new Set<number>()
    for (const arg of args.slice(2)) {
      const id = positiveInteger(arg)
      if (id === undefined) return errorReply('ERR Invalid client ID')
      ids.add(id)
    }
    keep = (client) => ids.has(client.id)
  } else if (args.length !== 1) return SYNTAX_ERROR
  let lines = ''
  for (const client of host.clients) if (keep(client)) lines += clientListLine(client.info())
  return text(lines, host.resp3)
}

// CLIENT KILL addr:port, or CLIENT KILL [ID id] [TYPE type] [USER user] [ADDR addr] [LADDR addr] [SKIPME yes|no]
function clientKill(host: ClientCommandHost, args: readonly Buffer[]): Buffer | undefined {
  if (args.length === 2) {
    const addr = (args[1] as Buffer).toString()
    const target = [...host.clients].find((client) => client.info().addr === addr)
    if (target === undefined) return errorReply('ERR No such client')
    kill(host, target, OK)
    return target === host.self ? undefined : OK
  }
  if (args.length < 3 || args.length % 2 === 0) return SYNTAX_ERROR
  const filters: Array<(client: ProxyClient) => boolean> = []
  let skipMe = true
  for (let i = 1; i < args.length; i += 2) {
    const option = (args[i] as Buffer).toString().toLowerCase()
    const value = (args[i + 1] as Buffer).toString()
    if (option === 'id') {
      const id = positiveInteger(args[i + 1] as Buffer)
      if (id === undefined) return errorReply('ERR client-id should be greater than 0')
      filters.push((client) => client.id === id)
    } else if (option === 'type') {
      const type = clientType(value)
      if (type === undefined) return errorReply(`ERR Unknown client type '${value}'`)
      filters.push((client) => typeOf(client.info()) === type)
    } else if (option === 'user') filters.push((client) => client.info().user === value)
    else if (option === 'addr') filters.push((client) => client.info().addr === value)
    else if (option === 'laddr') filters.push((client) => client.info().laddr === value)
    else if (option === 'skipme' && (value === 'yes' || value === 'no')) skipMe = value === 'yes'
    else return SYNTAX_ERROR
  }
  const targets = [...host.clients].filter(
    (client) => !(skipMe && client === host.self) && filters.every((matches) => matches(client)),
  )
  const reply = Buffer.from(`:${targets.length}\r\n`)
  for (const target of targets) kill(host, target, reply)
  return targets.includes(host.self) ? undefined : reply
}

// A client that kills itself gets its reply first, then the connection closes (as Redis does).
function kill(host: ClientCommandHost, target: ProxyClient, reply: Buffer): void {
  if (target === host.self) target.kill(reply)
  else target.kill()
}

// CLIENT UNBLOCK id [TIMEOUT|ERROR]: Redis unblocks the client's own backend connection, where it is blocked.
function clientUnblock(host: ClientCommandHost, args: readonly Buffer[]): void {
  if (args.length !== 2 && args.length !== 3) {
    host.forward(Promise.resolve(['CLIENT', ...args]))
    return
  }
  const id = integer(args[1] as Buffer)
  if (id === undefined) {
    host.reply(errorReply('ERR value is not an integer or out of range'))
    return
  }
  const mode = args[2]?.toString().toUpperCase()
  if (mode !== undefined && mode !== 'TIMEOUT' && mode !== 'ERROR') {
    host.reply(errorReply('ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR'))
    return
  }
  const target = [...host.clients].find((client) => client.id === id)
  if (target?.info().blocked !== true) {
    host.reply(ZERO)
    return
  }
  // Redis may already list the client as blocked while its CLIENT ID's answer is still on the way to the proxy
  // (a loaded proxy reads the unblocking client first): the UNBLOCK waits for the id rather than answering 0.
  host.forward(
    target
      .backendId()
      .then((backendId) =>
        backendId === undefined || backendId === 0
          ? undefined
          : ['CLIENT', 'UNBLOCK', String(backendId), ...(mode === undefined ? [] : [mode])],
      ),
  )
}

/** CLIENT REPLY's modes. */
export type ReplyMode = 'on' | 'off' | 'skip'

/** The mode a `CLIENT REPLY <mode>` request asks for, or undefined for any other request. */
export function replyMode(args: readonly Buffer[]): ReplyMode | undefined {
  if (args.length !== 2 || args[0]?.length !== 5 || (args[0] as Buffer).toString().toLowerCase() !== 'reply')
    return undefined
  const mode = (args[1] as Buffer).toString().toLowerCase()
  return mode === 'on' || mode === 'off' || mode === 'skip' ? mode : undefined
}

/** Whether `name` may name a client, as Redis checks it: printable ASCII without spaces. */
export function validClientName(name: Buffer): boolean {
  for (const byte of name) if (byte < 33 || byte > 126) return false
  return true
}

function integer(arg: Buffer): number | undefined {
  const textValue = arg.toString()
  return /^-?\d{1,18}$/.test(textValue) ? Number(textValue) : undefined
}

function positiveInteger(arg: Buffer): number | undefined {
  const value = integer(arg)
  return value !== undefined && value > 0 ? value : undefined
}

function bulk(value: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`$${value.length}\r\n`), value, Buffer.from('\r\n')])
}

// CLIENT LIST and INFO answer a verbatim string in RESP3, a bulk string in RESP2.
function text(value: string, resp3: boolean): Buffer {
  const bytes = Buffer.from(value, 'latin1')
  return resp3
    ? Buffer.concat([Buffer.from(`=${bytes.length + 4}\r\ntxt:`), bytes, Buffer.from('\r\n')])
    : bulk(bytes)
}

const BAD_NAME = errorReply('ERR Client names cannot contain spaces, newlines or special characters.')
const SYNTAX_ERROR = errorReply('ERR syntax error')
const ZERO = Buffer.from(':0\r\n')
const TRACKING_OFF = Buffer.from(
  '*6\r\n$5\r\nflags\r\n*1\r\n$3\r\noff\r\n$8\r\nredirect\r\n:-1\r\n$8\r\nprefixes\r\n*0\r\n',
)
const TRACKING_OFF_RESP3 = Buffer.from(
  '%3\r\n$5\r\nflags\r\n~1\r\n$3\r\noff\r\n$8\r\nredirect\r\n:-1\r\n$8\r\nprefixes\r\n*0\r\n',
)
