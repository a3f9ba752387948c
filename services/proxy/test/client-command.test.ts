import { Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { readUntil, startProxy, usePrivateRedis, waitFor } from './support/proxy-fixture.js'
import { exchange } from './support/raw-exchange.js'

const redis = usePrivateRedis()

// The `name=value` field names of one CLIENT LIST line, in order.
function fieldNames(line: string): string[] {
  return line
    .trim()
    .split(' ')
    .map((field) => field.slice(0, field.indexOf('=')))
}

// The Redis ids of every connection Redis has, from its own CLIENT LIST.
async function redisClientIds(direct: Redis): Promise<string[]> {
  const list = (await direct.client('LIST')) as string
  return [...list.matchAll(/^id=(\d+) /gm)].map((match) => match[1] as string).sort()
}

describe('CLIENT through the proxy: the proxy’s own clients, never its connections to Redis', () => {
  it('LIST and INFO list the proxy’s clients in Redis’s format, by TYPE and ID', async () => {
    const direct = new Redis(redis().url)
    const { client } = await startProxy(redis().url)
    const a = client()
    const b = client()
    await a.client('SETNAME', 'alpha')
    const aId = (await a.client('ID')) as number
    const bId = (await b.client('ID')) as number
    const info = (await a.client('INFO')) as string
    expect(fieldNames(info)).toEqual(fieldNames((await direct.client('INFO')) as string))
    expect(info).toMatch(
      new RegExp(`^id=${aId} addr=127\\.0\\.0\\.1:\\d+ .* name=alpha .* flags=N db=0 .* cmd=client `),
    )
    const list = (await b.client('LIST')) as string
    expect(
      list
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => Number(/^id=(\d+)/.exec(line)?.[1])),
    ).toEqual([aId, bId])
    expect(await b.client('LIST', 'ID', String(bId))).toMatch(new RegExp(`^id=${bId} [^\\n]*\\n$`))
    expect(await b.call('CLIENT', 'LIST', 'TYPE', 'pubsub')).toBe('')
    await expect(b.call('CLIENT', 'LIST', 'TYPE', 'nope')).rejects.toThrow("ERR Unknown client type 'nope'")
    direct.disconnect()
  })

  it('KILL acts on the proxy’s clients; an id of one of the proxy’s own Redis connections kills nothing', async () => {
    const direct = new Redis(redis().url)
    const { client } = await startProxy(redis().url)
    const killer = client()
    const victim = client()
    expect(await victim.ping()).toBe('PONG')
    const before = await redisClientIds(direct)
    for (const id of before) expect(await killer.client('KILL', 'ID', id)).toBe(0)
    expect(await redisClientIds(direct)).toEqual(before)
    const victimId = (await victim.client('ID')) as number
    let closed = false
    victim.once('close', () => {
      closed = true
    })
    expect(await killer.client('KILL', 'ID', String(victimId))).toBe(1)
    await waitFor(() => closed, 'the killed client to be closed')
    expect(await killer.ping()).toBe('PONG')
    expect(await killer.client('KILL', 'ID', String(victimId))).toBe(0)
    direct.disconnect()
  })

  it('KILL of the client itself answers, then closes it, as Redis does', async () => {
    const { socket } = await startProxy(redis().url)
    const s = await socket()
    s.write('CLIENT ID\r\n')
    const id = (await readUntil(s, (bytes) => bytes.includes('\r\n'))).toString().slice(1, -2)
    s.write(`CLIENT KILL ID ${id} SKIPME no\r\nPING\r\n`)
    expect((await readUntil(s, () => false)).toString()).toBe(':1\r\n')
    expect(s.readableEnded || s.destroyed).toBe(true)
  })

  it('UNBLOCK wakes a client blocked on its own Redis connection, with a nil or an UNBLOCKED error', async () => {
    const direct = new Redis(redis().url)
    const { client, namespace } = await startProxy(redis().url)
    const blocked = client()
    const other = client()
    const list = `${namespace}:list`
    const id = String(await blocked.client('ID'))
    const blockedClients = async () => /blocked_clients:1/.test(await direct.info('clients'))
    const popped = blocked.blpop(list, 0)
    await waitFor(blockedClients, 'BLPOP to block')
    expect(await other.client('LIST', 'ID', id)).toMatch(/ flags=b /)
    expect(await other.client('UNBLOCK', id)).toBe(1)
    expect(await popped).toBeNull()
    const failed = blocked.blpop(list, 0).catch((error: Error) => error.message)
    await waitFor(blockedClients, 'BLPOP to block again')
    expect(await other.client('UNBLOCK', id, 'ERROR')).toBe(1)
    expect(await failed).toBe('UNBLOCKED client unblocked via CLIENT UNBLOCK')
    expect(await other.client('UNBLOCK', id)).toBe(0)
    expect(await other.client('UNBLOCK', String(await other.client('ID')))).toBe(0)
    await expect(other.client('UNBLOCK', 'asd')).rejects.toThrow(
      'ERR value is not an integer or out of range',
    )
    direct.disconnect()
  })

  it('REPLY OFF, SKIP and ON silence replies as Redis does', async () => {
    const { port } = await startProxy(redis().url)
    const requests =
      'CLIENT REPLY OFF\r\nSET a 1\r\nGET a\r\nCLIENT REPLY foo\r\nCLIENT REPLY ON\r\nGET a\r\nCLIENT REPLY SKIP\r\n' +
      'GET a\r\nGET a\r\nCLIENT REPLY bar\r\nCLIENT REPLY SKIP\r\nCLIENT REPLY ON\r\nPING\r\n'
    const direct = await exchange(Number(new URL(redis().url).port), requests)
    expect(await exchange(port, requests)).toBe(direct)
    expect(direct).toBe('+OK\r\n$1\r\n1\r\n$1\r\n1\r\n-ERR syntax error\r\n+OK\r\n+PONG\r\n')
  })

  it('refuses the subcommands that would reach every client of Redis, with the reason', async () => {
    const { client } = await startProxy(redis().url)
    const c = client()
    await expect(c.client('PAUSE', '100')).rejects.toThrow(
      /CLIENT PAUSE is not supported through the proxy \(it would pause/,
    )
    await expect(c.call('CLIENT', 'UNPAUSE')).rejects.toThrow(/CLIENT UNPAUSE is not supported/)
    await expect(c.call('CLIENT', 'NO-EVICT', 'on')).rejects.toThrow(/CLIENT NO-EVICT is not supported/)
    expect(await c.call('CLIENT', 'GETREDIR')).toBe(-1)
    expect(await c.call('CLIENT', 'TRACKINGINFO')).toEqual(['flags', ['off'], 'redirect', -1, 'prefixes', []])
    expect(await c.ping()).toBe('PONG')
  })
})
