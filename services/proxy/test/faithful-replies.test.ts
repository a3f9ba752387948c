import { once } from 'node:events'
import { connect } from 'node:net'
import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { readUntil, startProxy, usePrivateRedis, waitFor } from './support/proxy-fixture.js'
import { exchange } from './support/raw-exchange.js'

const redis = usePrivateRedis()

// The same request to Redis itself and through the proxy: the proxy's answer is Redis's, byte for byte.
async function expectSameAsRedis(request: string, last?: string): Promise<string> {
  const { port } = await startProxy(redis().url)
  const direct = await exchange(Number(new URL(redis().url).port), request, last)
  expect(withoutId(await exchange(port, request, last))).toBe(withoutId(direct))
  return direct
}

// HELLO's reply names the connection's id, which differs between any two connections.
function withoutId(reply: string): string {
  return reply.replace(/\$2\r\nid\r\n:\d+\r\n/, '')
}

const RECURSIVE_SCRIPT = 'EVAL "local a={}; local b={a}; a[1]=b; return a" 0\r\n'

describe('the proxy answers as Redis does', () => {
  it('queues PING and ECHO inside MULTI (QUEUED, then in EXEC), and answers PING in a subscribed connection', async () => {
    const multi = await expectSameAsRedis('MULTI\r\nPING\r\nECHO a\r\nPING b\r\nEXEC\r\nPING\r\n')
    expect(multi).toBe(
      '+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n+PONG\r\n$1\r\na\r\n$1\r\nb\r\n+PONG\r\n',
    )
    await expectSameAsRedis('SELECT 0\r\nMULTI\r\nPING\r\nDISCARD\r\nPING\r\n')
    await expectSameAsRedis('HELLO 3\r\nMULTI\r\nECHO x\r\nEXEC\r\nPING\r\n')
    const subscribed = await expectSameAsRedis('SUBSCRIBE c\r\nPING\r\nPING x\r\nUNSUBSCRIBE\r\nPING\r\n')
    expect(subscribed).toContain('*2\r\n$4\r\npong\r\n$0\r\n\r\n')
  })

  it('relays a script reply nested deeper than the JavaScript stack, over RESP2 and RESP3, and keeps serving', async () => {
    const direct = await expectSameAsRedis(`${RECURSIVE_SCRIPT}PING\r\n`)
    expect(direct).toContain('-ERR reached lua stack limit')
    await expectSameAsRedis(`HELLO 3\r\n${RECURSIVE_SCRIPT}PING\r\n`)
    // Replies the core settles (a write's, here) are decoded and still relayed as Redis sent them.
    await expectSameAsRedis(`${RECURSIVE_SCRIPT.replace(' 0', ' 1 k')}PING\r\n`)
  })

  it('answers UNSUBSCRIBE, PUNSUBSCRIBE and SUNSUBSCRIBE of a connection subscribed to nothing frame by frame, and keeps it', async () => {
    const requests =
      'UNSUBSCRIBE a b c\r\nPUNSUBSCRIBE\r\nPUNSUBSCRIBE p*\r\nSUNSUBSCRIBE x y\r\nSUNSUBSCRIBE\r\nGET k\r\nPING\r\n'
    const direct = await expectSameAsRedis(requests)
    expect(direct.split('unsubscribe\r\n').length - 1).toBe(8)
    await expectSameAsRedis(`SELECT 1\r\n${requests}`)
    await expectSameAsRedis(`HELLO 3\r\n${requests}`)
  })
})

describe('the proxy closes a connection as Redis does', () => {
  it('after a protocol error: the error, then nothing more is read (a client still sending finds its writes refused)', async () => {
    const { port } = await startProxy(redis().url)
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true })
    socket.on('error', () => {})
    await once(socket, 'connect')
    let received = ''
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1')
    })
    // An inline request that never ends: Redis refuses it past 64 KiB.
    socket.write(`*1\r\n$4\r\nPING\r\n\0${'A'.repeat(70_000)}`)
    const chunk = Buffer.alloc(64 * 1024, 65)
    let written = 0
    const refused = await new Promise<boolean>((resolve) => {
      socket.once('error', () => resolve(true))
      const more = () => {
        if (written >= 64 * 1024 * 1024) resolve(false)
        else if (!socket.destroyed) {
          written += chunk.length
          if (socket.write(chunk)) setImmediate(more)
          else socket.once('drain', more)
        }
      }
      more()
    })
    expect(refused).toBe(true)
    expect(written).toBeLessThan(16 * 1024 * 1024)
    expect(received).toBe('+PONG\r\n-ERR Protocol error: too big inline request\r\n')
  })

  it('after QUIT', async () => {
    expect(await expectSameAsRedis('PING\r\nQUIT\r\nPING\r\n', '<never>')).toBe('+PONG\r\n+OK\r\n<closed>')
  })
})

describe('commands Redis answers that the proxy once answered itself', () => {
  it('PING during a script that runs too long answers BUSY, as Redis does', async () => {
    const direct = new Redis(redis().url)
    await direct.config('SET', 'busy-reply-threshold', '50')
    const { client } = await startProxy(redis().url)
    const looping = client()
      .eval('while true do end', 0)
      .catch((error: Error) => error)
    const c = client()
    await waitFor(async () => (await c.ping().catch((error: Error) => error.message)) !== 'PONG', 'BUSY')
    await expect(c.ping()).rejects.toThrow(/^BUSY Redis is busy running a script/)
    await direct.script('KILL')
    expect(String(await looping)).toMatch(/Script killed by user/)
    expect(await c.ping()).toBe('PONG')
    await direct.config('SET', 'busy-reply-threshold', '5000')
    direct.disconnect()
  })

  it('a script runs on its client’s own connection: other clients get BUSY, not a wait, and SCRIPT KILL and FUNCTION KILL through the proxy end it', async () => {
    const direct = new Redis(redis().url)
    await direct.config('SET', 'busy-reply-threshold', '50')
    // One shared connection: without a connection of its own, the script would hold every other client's
    // commands behind it, the kill among them.
    const { client } = await startProxy(redis().url, { sharedConnections: 1 })
    await direct.function(
      'LOAD',
      'REPLACE',
      "#!lua name=spin\nredis.register_function('spin', function() while true do end end)",
    )
    for (const [start, kill] of [
      [
        (c: Redis) =>
          c.eval("local f = function() while 1 do redis.call('ping') end end while 1 do pcall(f) end", 0),
        'SCRIPT',
      ],
      [(c: Redis) => c.fcall('spin', 0), 'FUNCTION'],
    ] as const) {
      const looping = start(client()).catch((error: Error) => error)
      const other = client()
      await waitFor(
        async () => (await other.ping().catch((error: Error) => error.message)) !== 'PONG',
        'BUSY',
      )
      await expect(other.get('k')).rejects.toThrow(/^BUSY Redis is busy running a script/)
      expect(await other.call(kill, 'KILL')).toBe('OK')
      expect(String(await looping)).toMatch(/Script killed by user/)
      expect(await other.ping()).toBe('PONG')
    }
    await direct.config('SET', 'busy-reply-threshold', '5000')
    direct.disconnect()
  })

  it('SYNC relays the replication stream from Redis (the RDB first)', async () => {
    const { socket } = await startProxy(redis().url)
    const s = await socket()
    s.write('SYNC\r\n')
    const received = await readUntil(s, (bytes) => bytes.includes('REDIS0010'))
    // Redis sends newlines to keep the link alive while it makes the RDB.
    expect(received.toString('latin1')).toMatch(/^\n*\$\d+\r\nREDIS0010/)
  })

  it('AUTH, when the proxy has no users of its own, logs in the client’s own Redis connection only', async () => {
    const direct = new Redis(redis().url)
    await direct.acl('SETUSER', 'bob', 'on', '>secret', '~*', '+@all')
    const { client } = await startProxy(redis().url)
    const bob = client()
    const other = client()
    await expect(bob.auth('bob', 'wrong')).rejects.toThrow(/^WRONGPASS/)
    expect(await bob.auth('bob', 'secret')).toBe('OK')
    expect(await bob.call('ACL', 'WHOAMI')).toBe('bob')
    expect(await other.call('ACL', 'WHOAMI')).toBe('default')
    await direct.acl('DELUSER', 'bob')
    direct.disconnect()
  })
})
