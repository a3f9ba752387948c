/** The URL with its password masked, so it can be logged or put in an error message. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password === '') return url
    parsed.password = '***'
    return parsed.toString()
  } catch {
    return url
  }
}
