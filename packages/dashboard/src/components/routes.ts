// The page's own routes live in the URL's fragment, so the aggregator serves one index.html for all of them.

/** Where the page is: the overview, one key's page, or one Redis node's page. */
export type Route = { page: 'overview' } | { page: 'key'; key: string } | { page: 'node'; node: string }

/** The fragment of a key's page. */
export function keyHref(key: string): string {
  return `#/keys/${encodeURIComponent(key)}`
}

/** The fragment of a Redis node's page (node: host:port). */
export function nodeHref(node: string): string {
  return `#/nodes/${encodeURIComponent(node)}`
}

/** The route a fragment names; anything unknown is the overview. */
export function parseRoute(hash: string): Route {
  const match = /^#\/(keys|nodes)\/(.+)$/.exec(hash)
  if (match === null) return { page: 'overview' }
  try {
    const name = decodeURIComponent(match[2] as string)
    return match[1] === 'keys' ? { page: 'key', key: name } : { page: 'node', node: name }
  } catch {
    return { page: 'overview' }
  }
}
