// The page's own routes live in the URL's fragment, so the aggregator serves one index.html for all of them.

/** Where the page is: the overview, or one key's page. */
export type Route = { page: 'overview' } | { page: 'key'; key: string }

/** The fragment of a key's page. */
export function keyHref(key: string): string {
  return `#/keys/${encodeURIComponent(key)}`
}

/** The route a fragment names; anything unknown is the overview. */
export function parseRoute(hash: string): Route {
  const match = /^#\/keys\/(.+)$/.exec(hash)
  if (match === null) return { page: 'overview' }
  try {
    return { page: 'key', key: decodeURIComponent(match[1] as string) }
  } catch {
    return { page: 'overview' }
  }
}
