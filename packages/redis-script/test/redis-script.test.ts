import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { type RedisCluster, startRedisCluster } from '@heatsink/devservices'
import { useTestRedis } from '@heatsink/test'
import { Cluster } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisScript, ScriptFileNameError, ScriptKeyCountError } from '../src/index.js'

const t = useTestRedis()

// Sets KEYS[1] to ARGV[1] and answers the key's new value and the number of keys it was given.
const setAndEcho = new RedisScript(
  'setAndEcho',
  "redis.call('SET', KEYS[1], ARGV[1]); return {redis.call('GET', KEYS[1]), #KEYS}",
  1,
)
// Any number of keys: deletes them all and answers how many existed.
const delAll = new RedisScript('delAll', "return redis.call('DEL', unpack(KEYS))")

describe('RedisScript on a standalone Redis', () => {
  it('runs inside a pipeline, its reply in exec() order beside plain commands', async () => {
    const client = t().client()
    const key = `${t().namespace}:p`
    const pipeline = client.pipeline().set(key, 'before')
    const reply = setAndEcho.run(pipeline, [key], ['after'])
    pipeline.get(key)
    expect(await pipeline.exec()).toEqual([
      [null, 'OK'],
      [null, ['after', 1]],
      [null, 'after'],
    ])
    expect(await reply).toEqual(['after', 1])
  })

  it('adds nothing to the client or to its pipelines, so their commands stay as fast as before', async () => {
    const client = t().client({ enableAutoPipelining: true })
    const untouched = t().client({ enableAutoPipelining: true })
    await setAndEcho.run(client, [`${t().namespace}:x`], ['1'])
    const pipeline = client.pipeline()
    setAndEcho.run(pipeline, [`${t().namespace}:y`], ['1'])
    await pipeline.exec()
    expect(Object.keys(client).sort()).toEqual(Object.keys(untouched).sort())
    expect(Object.keys(client.pipeline()).sort()).toEqual(Object.keys(untouched.pipeline()).sort())
    expect('setAndEcho' in client).toBe(false)
  })

  it('counts the keys of a script that takes any number, and rejects a wrong count for one that declares it', async () => {
    const client = t().client()
    const keys = [1, 2, 3].map((i) => `${t().namespace}:many:${i}`)
    await client.mset(keys[0]!, 'a', keys[2]!, 'c')
    expect(await delAll.run(client, keys)).toBe(2)
    expect(await client.exists(...keys)).toBe(0)
    expect(() => setAndEcho.run(client, keys, ['x'])).toThrow(ScriptKeyCountError)
  })

  it('passes a Redis error from the script to the caller', async () => {
    const client = t().client()
    const failing = new RedisScript('failing', "return redis.error_reply('ERR refused by the script')", 0)
    await expect(failing.run(client, [])).rejects.toThrow('refused by the script')
  })
})

describe('RedisScript.fromFile', () => {
  const dir = mkdtempSync(join(tmpdir(), 'heatsink-scripts-'))
  const file = (name: string, lua: string) => {
    writeFileSync(join(dir, name), lua)
    return pathToFileURL(join(dir, name))
  }

  it('takes the name and the number of keys from the file name', async () => {
    const fixed = RedisScript.fromFile(file('incrTwice-1.lua', "return redis.call('INCRBY', KEYS[1], 2)"))
    expect([fixed.name, fixed.numberOfKeys]).toEqual(['incrTwice', 1])
    const variadic = RedisScript.fromFile(file('touchAll.lua', 'return #KEYS'))
    expect([variadic.name, variadic.numberOfKeys]).toEqual(['touchAll', undefined])
    const client = t().client()
    expect(await fixed.run(client, [`${t().namespace}:n`])).toBe(2)
    expect(
      await variadic.run(
        client,
        ['a', 'b', 'c'].map((k) => `${t().namespace}:${k}`),
      ),
    ).toBe(3)
  })

  it('refuses a file name that does not follow the convention', () => {
    expect(() => RedisScript.fromFile(file('Bad-name.lua', 'return 1'))).toThrow(ScriptFileNameError)
    expect(() => RedisScript.fromFile(file('script-x.lua', 'return 1'))).toThrow(ScriptFileNameError)
  })
})

describe('RedisScript on a Redis Cluster', () => {
  let servers: RedisCluster
  let cluster: Cluster

  beforeAll(async () => {
    servers = await startRedisCluster({ masters: 3 })
    cluster = new Cluster(servers.nodes)
    await new Promise<void>((resolve, reject) => {
      cluster.once('ready', resolve)
      cluster.once('error', reject)
    })
  }, 60_000)

  // EVAL and EVALSHA calls over every master, from INFO commandstats.
  async function scriptCalls() {
    const calls = { eval: 0, evalsha: 0 }
    for (const node of cluster.nodes('master')) {
      const info = await node.info('commandstats')
      for (const [, name, count] of info.matchAll(/^cmdstat_(eval|evalsha):calls=(\d+)/gm)) {
        calls[name as 'eval' | 'evalsha'] += Number(count)
      }
    }
    return calls
  }

  afterAll(async () => {
    cluster?.disconnect()
    await servers?.stop()
  })

  it("routes each run to the master of its first key's slot, alone and in a pipeline", async () => {
    // Keys chosen to land on different masters (their slots are far apart).
    const keys = ['{a}:k', '{b}:k', '{c}:k', '{d}:k', '{e}:k']
    for (const key of keys)
      expect(await setAndEcho.run(cluster, [key], [`value of ${key}`])).toEqual([`value of ${key}`, 1])
    for (const key of keys) expect(await cluster.get(key)).toBe(`value of ${key}`)
    const pipeline = cluster.pipeline()
    setAndEcho.run(pipeline, ['{a}:k'], ['again'])
    pipeline.get('{a}:other')
    expect(await pipeline.exec()).toEqual([
      [null, ['again', 1]],
      [null, null],
    ])
  })

  it('sends EVAL once per connection, then EVALSHA', async () => {
    // A script no connection has run yet; only this file's tests use this private cluster, one at a time, so
    // the servers' counts are exact.
    const fresh = new RedisScript('fresh', "return redis.call('INCR', KEYS[1])", 1)
    const before = await scriptCalls()
    for (const expected of [1, 2, 3]) expect(await fresh.run(cluster, ['{counted}:k'])).toBe(expected)
    const after = await scriptCalls()
    expect({ eval: after.eval - before.eval, evalsha: after.evalsha - before.evalsha }).toEqual({
      eval: 1,
      evalsha: 2,
    })
  })

  it('recovers when a node forgets its scripts (SCRIPT FLUSH, as after a restart)', async () => {
    const key = '{flush}:k'
    expect(await setAndEcho.run(cluster, [key], ['first'])).toEqual(['first', 1])
    await Promise.all(cluster.nodes('master').map((node) => node.script('FLUSH')))
    expect(await setAndEcho.run(cluster, [key], ['second'])).toEqual(['second', 1])
    const pipeline = cluster.pipeline()
    setAndEcho.run(pipeline, [key], ['third'])
    await Promise.all(cluster.nodes('master').map((node) => node.script('FLUSH')))
    expect(await pipeline.exec()).toEqual([[null, ['third', 1]]])
    expect(await cluster.get(key)).toBe('third')
  })
})
