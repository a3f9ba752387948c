import { once } from 'node:events'
import { connect } from 'node:net'

/**
 * Sends `request` on a new connection to `port` and returns every byte received until the reply ends with
 * `last` (or the server closes the connection, marked `<closed>`): the same bytes sent to Redis and to the
 * proxy must come back the same.
 */
export async function exchange(port: number, request: Buffer | string, last = '+PONG\r\n'): Promise<string> {
  const socket = connect({ port, host: '127.0.0.1' })
  socket.on('error', () => {})
  await once(socket, 'connect')
  let received = ''
  const done = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`timed out; received ${JSON.stringify(received.slice(-300))}`))
    }, 10_000)
    const finish = (text: string) => {
      clearTimeout(timer)
      socket.destroy()
      resolve(text)
    }
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1')
      if (received.endsWith(last)) finish(received)
    })
    socket.on('close', () => finish(`${received}<closed>`))
  })
  socket.write(request)
  return done
}
