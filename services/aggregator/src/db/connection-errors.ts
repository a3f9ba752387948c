// Socket-level failures: the server is down, restarting, unreachable, or cut the connection.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
])

// SQLSTATE class 08 is "connection exception"; 57P01-57P03 mean the server is shutting down, crashed or is
// still starting; 53300 is too_many_connections. All are conditions that pass, unlike a bad statement.
const SQLSTATE_UNAVAILABLE = /^(08...|57P0[123]|53300)$/

// node-postgres reports its own client-side failures as plain Errors told apart only by their messages.
const DRIVER_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|encountered a connection error|not queryable|Query read timeout|Cannot use a pool after calling end/i

/** Whether `error` (or any error in its cause chain) means Postgres could not be reached, rather than a bad statement. */
export function isConnectionError(error: unknown): boolean {
  const seen = new Set<unknown>()
  const pending: unknown[] = [error]
  while (pending.length > 0) {
    const current = pending.pop()
    if (!(current instanceof Error) || seen.has(current)) continue
    seen.add(current)
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || SQLSTATE_UNAVAILABLE.test(code))) return true
    if (DRIVER_MESSAGES.test(current.message)) return true
    // Node reports a refused connection to every address of a host name as one AggregateError.
    if (current instanceof AggregateError) pending.push(...current.errors)
    pending.push(current.cause)
  }
  return false
}
