import { useEffect, useState } from 'preact/hooks'
import { getJson } from './api.js'

/**
 * GETs `url` again whenever `version` changes (with every frame of the live view), so a panel reading a route
 * other than GET /live stays as live as the rest of the page; null: nothing is shown that needs it, nothing is
 * read. `data` is null on 404 or before the first answer.
 */
export function usePolled<T>(url: string | null, version: number): { data: T | null; error: string | null } {
  const [data, setData] = useState<T | null>(null)
  const [error, setError] = useState<string | null>(null)
  useEffect(() => {
    if (url === null) return
    let current = true
    getJson<T>(url).then(
      (body) => {
        if (!current) return
        setData(body)
        setError(null)
      },
      (failure: Error) => current && setError(failure.message),
    )
    return () => {
      current = false
    }
  }, [url, version])
  return { data, error }
}
