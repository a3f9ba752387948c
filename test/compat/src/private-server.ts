import { parseURL } from 'ioredis/built/utils/index.js'

/** Where a client that names no server connects: this project's private redis-server. */
export interface DefaultServer {
  readonly port: number
  readonly host: string
}

type Options = Record<string, unknown>

const isOptions = (arg: unknown): arg is Options => typeof arg === 'object' && arg !== null

/**
 * The constructor arguments of an ioredis `Redis`, pointed at `server` when they name no port, socket path or
 * sentinels, exactly where ioredis would have used its default 127.0.0.1:6379. Every constructor form is
 * kept: (), (port), (port, host), (port, host, options), (port, options), (url), (url, options), (path),
 * (options). When a default applies, the trailing options object is copied with `port` (and `host`, when none
 * was given) added, or an options object is appended: (url) becomes (url, options), () becomes (options).
 * The caller's objects are never changed.
 */
export function withDefaultServer(args: readonly unknown[], server: DefaultServer): unknown[] {
  const given = parsedOptions(args)
  if (given.port !== undefined || given.path !== undefined || given.sentinels !== undefined) return [...args]
  const defaults: Options = { port: server.port }
  if (given.host === undefined) defaults.host = server.host
  const last = args.findLastIndex((arg) => arg !== undefined && arg !== null)
  const trailing = args[last]
  if (last >= 0 && isOptions(trailing)) return [...args.slice(0, last), { ...trailing, ...defaults }]
  return [...args.slice(0, last + 1), defaults]
}

// What ioredis's Redis#parseOptions gathers from the arguments before applying its defaults: the first
// argument to set an option wins (lodash `defaults`), except that a number always sets the port.
function parsedOptions(args: readonly unknown[]): Options {
  const options: Options = {}
  const fill = (from: Options) => {
    for (const [key, value] of Object.entries(from)) if (options[key] === undefined) options[key] = value
  }
  for (const arg of args) {
    if (arg === undefined || arg === null) continue
    if (typeof arg === 'number') options.port = arg
    else if (typeof arg === 'string') fill(parseURL(arg) as Options)
    else if (isOptions(arg)) fill(arg)
  }
  return options
}
