import { encodeReply, errorReply } from '../resp/reply-codec.js'
import type { Request } from '../resp/request-parser.js'
import {
  CLIENT_SUBCOMMANDS,
  type ClientCommandHost,
  runClientCommand,
  validClientName,
} from './client-command.js'
import type { ProxyUsers } from './proxy-users.js'
import { NO_PASSWORD, NOPROTO, OK, RESET, unsupported, WRONGPASS, wrongArity } from './redis-replies.js'

/** What the connection commands may read and change of a client session. */
export interface SessionControl extends ClientCommandHost {
  readonly id: number
  readonly users: ProxyUsers
  readonly authenticated: boolean
  authenticate(): void
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
    case 'auth':
    case 'quit':
    case 'monitor':
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

/**
 * The connection commands the proxy answers itself, as Redis words its answers: QUIT and RESET,
 * AUTH and HELLO against the proxy's own users (when it has none, AUTH goes to Redis on the client's own
 * connection), CLIENT's connection subcommands (client-command.ts). MONITOR gets a clear error instead of a hang.
 */
export function runConnectionCommand(session: SessionControl, name: string, request: Request): void {
  const args = request.args
  switch (name) {
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
      runClientCommand(session, args)
      return
    default:
      session.reply(
        unsupported('MONITOR', "it would show only the proxy's multiplexed connections; run it on Redis"),
      )
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
      if (name !== undefined && !validClientName(name)) {
        session.reply(errorReply('ERR Client names cannot contain spaces, newlines or special characters.'))
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
