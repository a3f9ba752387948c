// Apart from redis-url.ts so that errors.ts, which redis-url.ts throws from, can redact without an import cycle.

/** The URL with every password (before `@`, and `sentinelPassword=`) replaced, for messages and logs. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@').replace(/([?&]sentinelPassword=)[^&]*/, '$1***')
}
