import { errorReply, statusReply } from '../resp/reply-codec.js'

/** Replies worded as Redis words them, so clients that match on the text behave as they do against Redis. */
export const OK = statusReply('OK')
export const RESET = statusReply('RESET')
export const NOAUTH = errorReply('NOAUTH Authentication required.')
export const WRONGPASS = errorReply('WRONGPASS invalid username-password pair or user is disabled.')
export const NO_PASSWORD = errorReply(
  'ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?',
)
export const NOPROTO = errorReply('NOPROTO unsupported protocol version')
export const NULL = Buffer.from('$-1\r\n')

/** `ERR wrong number of arguments for '<command>' command`. */
export function wrongArity(command: string): Buffer {
  return errorReply(`ERR wrong number of arguments for '${command}' command`)
}

/** What the proxy refuses, with the reason and what to do instead, rather than a hang. */
export function unsupported(what: string, why: string): Buffer {
  return errorReply(`ERR heatsink proxy: ${what} is not supported through the proxy (${why})`)
}
