import { encodeReply, errorReply } from '../resp/reply-codec.js'
import type { Request } from '../resp/request-parser.js'
import type { ProxyUsers } from './proxy-users.js'
import {
  NO_PASSWORD,
  NOPROTO,
  NULL,
  OK,
  PONG,
  RESET,
  unsupported,
  WRONGPASS,
  wrongArity,
} from './redis-replies.js'

/** What the connection commands may read and change of a client session. */
export interface SessionControl {
  readonly id: number
  readonly users: ProxyUsers
  readonly authenticated: boolean
  readonly resp3: boolean
  name: Buffer | null
  authenticate(): void
  reply(bytes: Buffer): void
  quit(reply: Buffer): void
  reset(): void
  switchProtocol(version: 2 | 3): void
}

/**
 * Whether the proxy answers `name` itself: 'now', 'after-replies' (it changes what the connection is, so every
 * earlier reply must be in first), or undefined (the command goes through the core to Redis).
 */
export function connectionCommandTiming(name: string, request: Request): 'now' | 'after-replies' | undefined {
  switch (name) {
    case 'ping':
    case 'echo':
    case 'auth':
    case 'quit':
    case 'monitor':
    case 'sync':
    case 'psync':
      return 'now'
    case 'hello':
    case 'reset':
      return 'after-replies'
    case 'client':
      return CLIENT_SUBCOMMANDS.has(request.args[0]?.toString().toLowerCase() ?? '') ? 'now' : undefined
    default:
      return undefined
  }
}

const CLIENT_SUBCOMMANDS: ReadonlySet<string> = new Set([
  'setname',
  'getname',
  'id',
  'tracking',
  'caching',
  'reply',
])

/**
 * The connection commands the proxy answers itself, as Redis words its answers: PING, ECHO, QUIT and RESET,
 * AUTH and HELLO against the proxy's own users, CLIENT SETNAME / GETNAME / ID of the client's proxy connection.
 * MONITOR, replication and client-side caching get a clear error instead of a hang: they would need the proxy's
 * backend connections to carry one client's state.
 */
export function runConnectionCommand(session: SessionControl, name: string, request: Request): void {
  const args = request.args
  switch (name) {
    case 'ping':
      if (args.length > 1) session.reply(wrongArity('ping'))
      else session.reply(args[0] === undefined ? PONG : bulk(args[0]))
      return
    case 'echo':
      session.reply(args.length === 1 ? bulk(args[0] as Buffer) : wrongArity('echo'))
      return
    case 'quit':
      session.quit(OK)
      return
    case 'reset':
      session.reset()
      session.reply(RESET)
      return
    case 'auth':
      session.reply(auth(session, args))
      return
    case 'hello':
      hello(session, args)
      return
    case 'client':
      session.reply(client(session, args))
      return
    case 'monitor':
      session.reply(
        unsupported('MONITOR', "it would show only the proxy's multiplexed connections; run it on Redis"),
      )
      return
    default:
      session.reply(unsupported(name.toUpperCase(), 'replication connects to Redis itself'))
  }
}

function auth(session: SessionControl, args: Buffer[]): Buffer {
  if (args.length < 1 || args.length > 2)
    return args.length === 0 ? wrongArity('auth') : errorReply('ERR syntax error')
  if (!session.users.required) return args.length === 1 ? NO_PASSWORD : WRONGPASS
  const user = args.length === 2 ? (args[0] as Buffer).toString() : 'default'
  if (!session.users.verify(user, args[args.length - 1] as Buffer)) return WRONGPASS
  session.authenticate()
  return OK
}

// HELLO [protover [AUTH username password] [SETNAME clientname]]
function hello(session: SessionControl, args: Buffer[]): void {
  let version: 2 | 3 = session.resp3 ? 3 : 2
  if (args.length > 0) {
    const requested = Number((args[0] as Buffer).toString())
    if (!Number.isInteger(requested)) {
      session.reply(errorReply('ERR Protocol version is not an integer or out of range'))
      return
    }
    if (requested !== 2 && requested !== 3) {
      session.reply(NOPROTO)
      return
    }
    version = requested
  }
  let name: Buffer | undefined
  for (let i = 1; i < args.length; i++) {
    const option = (args[i] as Buffer).toString().toLowerCase()
    if (option === 'auth' && i + 2 < args.length) {
      const user = (args[i + 1] as Buffer).toString()
      if (!session.users.required || !session.users.verify(user, args[i + 2] as Buffer)) {
        session.reply(WRONGPASS)
        return
      }
      session.authenticate()
      i += 2
    } else if (option === 'setname' && i + 1 < args.length) {
      name = args[++i]
      if (name !== undefined && !validName(name)) {
        session.reply(BAD_NAME)
        return
      }
    } else {
      session.reply(errorReply(`ERR Syntax error in HELLO option '${option}'`))
      return
    }
  }
  if (!session.authenticated) {
    session.reply(
      errorReply(
        'NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time',
      ),
    )
    return
  }
  if (name !== undefined) session.name = name
  if (version === 3 || session.resp3) session.switchProtocol(version)
  else session.reply(helloReply(session.id))
}

function client(session: SessionControl, args: Buffer[]): Buffer {
  const sub = (args[0] as Buffer).toString().toLowerCase()
  switch (sub) {
    case 'setname': {
      const name = args[1]
      if (args.length !== 2 || name === undefined) return wrongArity('client|setname')
      if (!validName(name)) return BAD_NAME
      session.name = name.length === 0 ? null : name
      return OK
    }
    case 'getname':
      return session.name === null ? NULL : bulk(session.name)
    case 'id':
      return Buffer.from(`:${session.id}\r\n`)
    case 'tracking':
    case 'caching':
      return unsupported(
        `CLIENT ${sub.toUpperCase()}`,
        "the proxy shares backend connections; Heatsink keeps hot keys in the proxy's own L1 instead",
      )
    default:
      return unsupported('CLIENT REPLY', 'replies are matched to requests in order')
  }
}

const BAD_NAME = errorReply('ERR Client names cannot contain spaces, newlines or special characters.')

// As Redis: printable ASCII without spaces.
function validName(name: Buffer): boolean {
  for (const byte of name) if (byte < 33 || byte > 126) return false
  return true
}

function bulk(value: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`$${value.length}\r\n`), value, Buffer.from('\r\n')])
}

/** HELLO 2's reply: what Redis answers, with the proxy connection's id. */
function helloReply(id: number): Buffer {
  const out: Buffer[] = []
  encodeReply(
    [
      'server',
      'redis',
      'version',
      '7.0.0',
      'proto',
      2,
      'id',
      id,
      'mode',
      'standalone',
      'role',
      'master',
      'modules',
      [],
    ],
    out,
  )
  return Buffer.concat(out)
}
