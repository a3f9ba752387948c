/** The message of anything thrown, for one-line reasons inside longer messages. */
export function errorMessage(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0)
    return error.errors.map(errorMessage).join('; ')
  if (error instanceof Error) return error.message || error.name
  return String(error)
}
