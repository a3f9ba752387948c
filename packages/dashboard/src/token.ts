// The operator's API token, kept for this browser tab only (sessionStorage): never in the URL, never in a
// cookie, gone when the tab closes.
const STORAGE_KEY = 'heatsink.apiToken'

/** The token typed in this tab, or null. */
export function loadToken(): string | null {
  const token = sessionStorage.getItem(STORAGE_KEY)
  return token === null || token === '' ? null : token
}

/** Keeps (or, given an empty string, forgets) the token for this tab. */
export function saveToken(token: string): void {
  if (token === '') sessionStorage.removeItem(STORAGE_KEY)
  else sessionStorage.setItem(STORAGE_KEY, token)
}
