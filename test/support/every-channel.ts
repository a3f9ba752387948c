import { Redis } from 'ioredis'

/** A client of one server listening to every channel (PSUBSCRIBE *), as an application's could. */
export interface ChannelListener {
  /** The channel of every message received so far, in order. */
  readonly channels: string[]
  close(): void
}

/** Subscribes to every channel of the server at `url`; resolves once the subscription is confirmed. */
export async function listenToEveryChannel(url: string): Promise<ChannelListener> {
  const client = new Redis(url)
  client.on('error', () => {})
  const channels: string[] = []
  client.on('pmessage', (_pattern: string, channel: string) => channels.push(channel))
  await client.psubscribe('*')
  return { channels, close: () => client.disconnect() }
}
