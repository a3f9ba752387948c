import { Redis as IORedis, type RedisOptions } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { client, server } from './client.js'
import { withDefaultServer } from './private-server.js'

// The options ioredis itself derives from constructor arguments (its own parsing, without connecting).
function parsed(args: unknown[]): RedisOptions {
  const target = Object.create(IORedis.prototype) as {
    parseOptions(...args: unknown[]): void
    options: RedisOptions
  }
  target.parseOptions(...args)
  return target.options
}

const at = { port: 7001, host: '127.0.0.1' }

describe('withDefaultServer', () => {
  it.each([
    ['()', [], 7001, '127.0.0.1'],
    ['(undefined)', [undefined], 7001, '127.0.0.1'],
    ['(port)', [6390], 6390, 'localhost'],
    ['(port, host)', [6390, '10.0.0.1'], 6390, '10.0.0.1'],
    ['(port, host, options)', [6390, '10.0.0.1', { db: 2 }], 6390, '10.0.0.1'],
    ['(port, options)', [6390, { db: 2 }], 6390, 'localhost'],
    ['(numeric string)', ['6390'], 6390, 'localhost'],
    ['(url with port)', ['redis://10.0.0.1:6390/2'], 6390, '10.0.0.1'],
    ['(url without port)', ['redis://10.0.0.1/2'], 7001, '10.0.0.1'],
    ['(host only)', ['10.0.0.1'], 7001, '10.0.0.1'],
    ['(url, options)', ['redis://10.0.0.1:6390', { db: 2 }], 6390, '10.0.0.1'],
    ['(url without port, options)', ['redis://10.0.0.1', { db: 2 }], 7001, '10.0.0.1'],
    ['(options)', [{ db: 2 }], 7001, '127.0.0.1'],
    ['(options with port)', [{ port: 6390 }], 6390, 'localhost'],
    ['(options with host)', [{ host: '10.0.0.1' }], 7001, '10.0.0.1'],
  ])('%s', (_form, args, port, host) => {
    const options = parsed(withDefaultServer(args, at))
    expect(options.port).toBe(port)
    expect(options.host).toBe(host)
  })

  it('keeps every other option, and the caller options object unchanged', () => {
    const given = { db: 2, keyPrefix: 'p:', enableAutoPipelining: true }
    const options = parsed(withDefaultServer(['redis://:secret@10.0.0.1/3', given], at))
    expect(options).toMatchObject({
      port: 7001,
      host: '10.0.0.1',
      password: 'secret',
      db: 3,
      keyPrefix: 'p:',
    })
    expect(given).toEqual({ db: 2, keyPrefix: 'p:', enableAutoPipelining: true })
  })

  it('leaves a socket path or sentinels alone', () => {
    expect(withDefaultServer(['/tmp/redis.sock'], at)).toEqual(['/tmp/redis.sock'])
    expect(withDefaultServer([{ path: '/tmp/redis.sock' }], at)).toEqual([{ path: '/tmp/redis.sock' }])
    const sentinels = { sentinels: [{ host: '10.0.0.1', port: 26379 }], name: 'main' }
    expect(withDefaultServer([sentinels], at)).toEqual([sentinels])
  })
})

describe('the shim client', () => {
  it("connects `new Redis()` to the project's private server", async () => {
    const redis = new client.Redis()
    try {
      expect(redis.options.port).toBe(server.port)
      const info = await redis.info('server')
      expect(info).toContain(`tcp_port:${server.port}`)
    } finally {
      redis.disconnect()
    }
  })
})
