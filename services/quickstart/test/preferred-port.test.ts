import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { startOnPreferredPort } from '../src/preferred-port.js'

const servers: Server[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))))
})

/** Listens on `port` (0: any free one) on loopback, as a replica's API does; resolves with the port taken. */
async function listen(port: number): Promise<number> {
  const server = createServer((_request, response) => response.end('ok'))
  servers.push(server)
  server.listen(port, '127.0.0.1')
  await Promise.race([
    once(server, 'listening'),
    once(server, 'error').then(([error]) => Promise.reject(error)),
  ])
  return (server.address() as AddressInfo).port
}

describe('startOnPreferredPort', () => {
  it('listens on the preferred port when it is free', async () => {
    const free = await listen(0)
    await new Promise((resolve) => servers.pop()?.close(resolve))
    expect(await startOnPreferredPort(free, listen)).toEqual({ value: free, fellBack: false })
  })

  it('falls back to a free port, and says so, when another process holds the preferred one', async () => {
    const taken = await listen(0)
    const { value: port, fellBack } = await startOnPreferredPort(taken, listen)
    expect(fellBack).toBe(true)
    expect(port).not.toBe(taken)
    expect(port).toBeGreaterThan(0)
    const response = await fetch(`http://127.0.0.1:${port}/`)
    expect(await response.text()).toBe('ok')
  })

  it('passes on any other failure', async () => {
    const failure = Object.assign(new Error('permission denied'), { code: 'EACCES' })
    await expect(startOnPreferredPort(80, () => Promise.reject(failure))).rejects.toBe(failure)
  })
})
