import { randomBytes } from 'node:crypto'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { adoptReading, readsIntoSharedBuffer, receiveReads } from '../src/shared-read-buffer.js'

let server: Server | undefined

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
  server = undefined
})

// A server as the proxy makes it: paused on connect, each connection adopted and read by a receiver.
async function acceptOne(): Promise<{
  client: Socket
  accepted: Promise<{ socket: Socket; bytes: Buffer[] }>
}> {
  let resolveAccepted: (value: { socket: Socket; bytes: Buffer[] }) => void = () => {}
  const accepted = new Promise<{ socket: Socket; bytes: Buffer[] }>((resolve) => {
    resolveAccepted = resolve
  })
  const listening = createServer({ pauseOnConnect: true }, (raw) => {
    const socket = adoptReading(raw)
    const bytes: Buffer[] = []
    receiveReads(socket, { receive: (chunk) => bytes.push(chunk) })
    resolveAccepted({ socket, bytes })
  })
  server = listening
  const port = await new Promise<number>((resolve) =>
    listening.listen(0, '127.0.0.1', () => resolve((listening.address() as { port: number }).port)),
  )
  const client = connect(port, '127.0.0.1')
  await new Promise((resolve) => client.once('connect', resolve))
  return { client, accepted }
}

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

describe('the shared read buffer', () => {
  it('reads an accepted connection into the shared buffer on this Node, each chunk a copy of its own', async () => {
    const { client, accepted } = await acceptOne()
    const payload = randomBytes(1024 * 1024)
    const { socket, bytes } = await accepted
    expect(readsIntoSharedBuffer(socket)).toBe(true)
    // Byte by byte, then more than the buffer holds at once.
    for (const byte of payload.subarray(0, 64)) {
      client.write(Buffer.of(byte))
      await new Promise((resolve) => setImmediate(resolve))
    }
    client.write(payload.subarray(64))
    await until(() => bytes.reduce((sum, chunk) => sum + chunk.length, 0) === payload.length)
    // Chunks handed on earlier are unchanged by every later read into the one buffer.
    expect(Buffer.concat(bytes).equals(payload)).toBe(true)
    client.destroy()
  })

  it('stops reading while the socket is paused and goes on when it is resumed', async () => {
    const { client, accepted } = await acceptOne()
    const { socket, bytes } = await accepted
    client.write('first')
    await until(() => bytes.length === 1)
    socket.pause()
    client.write('second')
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(Buffer.concat(bytes).toString()).toBe('first')
    socket.resume()
    await until(() => Buffer.concat(bytes).toString() === 'firstsecond')
    client.destroy()
  })
})
