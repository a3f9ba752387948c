import { once } from 'node:events'
import { Agent, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { connect, type Socket } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { drainOnClose } from '../src/http/connection-drain.js'

// A bare Fastify app with one route that answers when the test says so: the drain is what is tested.
async function slowApp(timeoutMs: number) {
  let answer = () => {}
  const answered = new Promise<void>((resolve) => {
    answer = resolve
  })
  let start = () => {}
  const started = new Promise<void>((resolve) => {
    start = resolve
  })
  const app = Fastify()
  drainOnClose(app, timeoutMs)
  app.get('/fast', async () => 'fast')
  app.post('/echo', async (request) => request.body)
  app.get('/slow', async () => {
    start()
    await answered
    return 'slow'
  })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  return { app, port, answer, started }
}

const closedAt = (socket: Socket) =>
  new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now())))

describe('drainOnClose', () => {
  const apps: FastifyInstance[] = []
  const agents: Agent[] = []
  afterEach(async () => {
    for (const agent of agents.splice(0)) agent.destroy()
    await Promise.all(apps.splice(0).map((app) => app.close()))
  })

  it('closes idle and unused connections at once and answers the request in progress with Connection: close', async () => {
    const { app, port, answer, started } = await slowApp(5000)
    apps.push(app)
    // Two keep-alive clients: an agent would send the slow request on the connection meant to stay idle.
    const idleAgent = new Agent({ keepAlive: true })
    const busyAgent = new Agent({ keepAlive: true })
    agents.push(idleAgent, busyAgent)
    const get = (path: string, agent: Agent) =>
      new Promise<{ body: string; connection: string | undefined; socket: Socket }>((resolve, reject) => {
        const sent = request({ host: '127.0.0.1', port, path, agent }, (response) => {
          let body = ''
          response.on('data', (chunk) => {
            body += String(chunk)
          })
          // Once read, the agent takes the connection back among its idle ones.
          response.on('end', () =>
            setImmediate(() =>
              resolve({ body, connection: response.headers.connection, socket: sent.socket as Socket }),
            ),
          )
        })
        sent.on('error', reject).end()
      })

    const idle = (await get('/fast', idleAgent)).socket
    const idleClosed = closedAt(idle)
    const unused = connect(port, '127.0.0.1')
    await once(unused, 'connect')
    const unusedClosed = closedAt(unused)
    const slow = get('/slow', busyAgent)
    await started

    const closing = performance.now()
    let closed = false
    const close = app.close().then(() => {
      closed = true
    })
    expect((await idleClosed) - closing).toBeLessThan(500)
    expect((await unusedClosed) - closing).toBeLessThan(500)
    expect(closed).toBe(false)

    answer()
    const reply = await slow
    expect(reply).toMatchObject({ body: 'slow', connection: 'close' })
    await close
    expect(performance.now() - closing).toBeLessThan(2000)
  })

  it('closes a connection whose request never completes at the deadline', async () => {
    const { app, port } = await slowApp(300)
    apps.push(app)
    const stuck = connect(port, '127.0.0.1')
    await once(stuck, 'connect')
    // Headers sent, body announced and never sent: the request is in progress for as long as the client likes.
    stuck.write(
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n',
    )
    await once(stuck, 'data')
    const stuckClosed = closedAt(stuck)

    const closing = performance.now()
    await app.close()
    const after = (await stuckClosed) - closing
    expect(after).toBeGreaterThanOrEqual(250)
    expect(after).toBeLessThan(1000)
  })
})
