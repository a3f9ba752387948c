import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { ensureRedisPy } from '../support/debian-package.js'
import { startProxy, usePrivateRedis } from '../support/proxy-fixture.js'
import { runProgram } from '../support/run-program.js'

const direct = usePrivateRedis()
const behind = usePrivateRedis()
const SCRIPT = fileURLToPath(new URL('./redis_py_session.py', import.meta.url))

async function session(port: number): Promise<Record<string, unknown>> {
  const { stdout, stderr, code } = await runProgram(ensureRedisPy(), [SCRIPT, String(port), 'pyapp'])
  expect(stderr).toBe('')
  expect(code).toBe(0)
  return JSON.parse(stdout) as Record<string, unknown>
}

describe('redis-py through the proxy', () => {
  it('strings, hashes, lists, sets, sorted sets, pipelines, transactions and pub/sub give the same results as direct', async () => {
    const { port } = await startProxy(behind().url)
    const expected = await session(Number(new URL(direct().url).port))
    const through = await session(port)
    expect(through).toEqual(expected)
    expect(expected.message).toEqual(['message', 'message one'])
    expect(expected.transaction).toEqual([1, 2, '2'])
  })
})
