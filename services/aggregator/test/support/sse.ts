/** One server-sent event. */
export interface ServerSentEvent {
  id: string | undefined
  event: string
  data: string
}

/** An open GET of an event stream, read message by message. */
export interface EventStream {
  next(timeoutMs?: number): Promise<ServerSentEvent>
  close(): void
}

/** Opens `url` as an event stream, sending `lastEventId` as a browser's EventSource does when it reconnects. */
export async function openEventStream(url: string, lastEventId?: string): Promise<EventStream> {
  const abort = new AbortController()
  const response = await fetch(url, {
    headers: {
      accept: 'text/event-stream',
      ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
    },
    signal: abort.signal,
  })
  if (!response.ok || response.body === null) throw new Error(`GET ${url} answered ${response.status}`)
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  const read = async (): Promise<ServerSentEvent> => {
    for (;;) {
      const end = buffer.indexOf('\n\n')
      if (end >= 0) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const message: ServerSentEvent = { id: undefined, event: 'message', data: '' }
        let fields = 0
        for (const line of block.split('\n')) {
          const colon = line.indexOf(':')
          if (colon === 0) continue
          const name = line.slice(0, colon)
          const value = line.slice(colon + 1).replace(/^ /, '')
          if (name === 'id') message.id = value
          else if (name === 'event') message.event = value
          else if (name === 'data') message.data += message.data === '' ? value : `\n${value}`
          else continue
          fields++
        }
        // retry: lines and comments carry no message.
        if (fields > 0) return message
        continue
      }
      const { value, done } = await reader.read()
      if (done) throw new Error('the event stream ended')
      buffer += value
    }
  }
  return {
    next: (timeoutMs = 5000) =>
      Promise.race([
        read(),
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error(`no event within ${timeoutMs} ms`)), timeoutMs).unref(),
        ),
      ]),
    close: () => abort.abort(),
  }
}
