import { describe, expect, it } from 'vitest'
import { ensureDebianPackage } from '../support/debian-package.js'
import { startProxy, usePrivateRedis } from '../support/proxy-fixture.js'
import { runProgram } from '../support/run-program.js'

// Two private servers: the same session runs against one directly and against the other through the proxy.
const direct = usePrivateRedis()
const behind = usePrivateRedis()

// Ordinary commands of every type, errors included, as an operator would type them.
const SESSION = `
PING
PING hello
ECHO "two words"
SET greeting "hello world"
GET greeting
APPEND greeting !
STRLEN greeting
GETRANGE greeting 0 4
SET counter 10
INCR counter
INCRBY counter 5
DECR counter
INCRBYFLOAT counter 1.5
MSET a 1 b 2 c 3
MGET a b c nosuchkey
EXISTS a b nosuchkey
DEL a b
TYPE c
HSET user name ada lang en
HGET user name
HGETALL user
HINCRBY user visits 3
HKEYS user
HLEN user
LPUSH list x y z
RPUSH list w
LRANGE list 0 -1
LPOP list
LLEN list
SADD set a b c
SISMEMBER set b
SCARD set
SORT set ALPHA
ZADD z 1 one 2 two 3 three
ZRANGE z 0 -1 WITHSCORES
ZSCORE z two
ZRANK z three
ZREVRANGE z 0 1
SET ttl value EX 100
TTL ttl
EXPIRE greeting 50
PERSIST greeting
LPUSH greeting x
GET nosuchkey
HGETALL nosuchkey
NOSUCHCOMMAND arg
GET
MULTI
INCR counter2
INCR counter2
EXEC
SELECT 1
SET other db1
GET other
SELECT 0
GET other
EXISTS other greeting
CLIENT SETNAME cli
CLIENT GETNAME
`

// Not execFileSync: the proxy under test runs on this process's event loop.
async function run(port: number): Promise<string> {
  const cli = ensureDebianPackage('/usr/bin/redis-cli', 'redis-tools')
  return (await runProgram(cli, ['-p', String(port)], SESSION.trim())).stdout
}

describe('redis-cli through the proxy', () => {
  it('a scripted session of ordinary commands returns exactly what it returns against Redis directly', async () => {
    const { port } = await startProxy(behind().url)
    const expected = await run(Number(new URL(direct().url).port))
    const through = await run(port)
    expect(through).toBe(expected)
    // The session did run: a sample of what Redis answered.
    expect(expected).toContain('hello world')
    expect(expected).toContain('WRONGTYPE')
  })
})
