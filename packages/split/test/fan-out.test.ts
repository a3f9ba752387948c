import { redisClusterSlot } from '@heatsink/protocol'
import { expect, it } from 'vitest'
import { callAt, FanOut, type RedisCall } from '../src/fan-out.js'
import { describeTargets } from './support/targets.js'

describeTargets('fan-out of many commands', (target) => {
  const at = (command: string, key: string, ...rest: string[]): RedisCall =>
    callAt(redisClusterSlot(key), command, key, ...rest)

  it('answers every command in order, over every master', async () => {
    const t = target()
    const fanOut = new FanOut(await t.client())
    const keys = Array.from({ length: 12 }, (_, i) => `${t.namespace}:{k${i}}`)
    await fanOut.all(keys.map((key, i) => at('set', key, `v${i}`)))
    expect(await fanOut.all(keys.map((key) => at('get', key)))).toEqual(keys.map((_, i) => `v${i}`))
  })

  it("rejects with the first failing command's error, once every command has run", async () => {
    const t = target()
    const client = await t.client()
    const fanOut = new FanOut(client)
    const [text, other, last] = [`${t.namespace}:{a}`, `${t.namespace}:{b}`, `${t.namespace}:{c}`]
    await client.set(text, 'not a number')
    await client.set(other, 'also not')
    const run = fanOut.all([at('incr', text), at('incr', other), at('set', last, 'written')])
    await expect(run).rejects.toThrow(/not an integer/)
    expect(await client.get(last)).toBe('written')
  })

  it('rejects, with nothing left unobserved, when a command cannot even be sent', async () => {
    const t = target()
    const fanOut = new FanOut(await t.client())
    const key = `${t.namespace}:{x}`
    // Sent first and failing later: vitest fails the run on a rejection nobody observed.
    const failing = at('incr', key)
    await (await t.client()).set(key, 'text')
    const unknown: RedisCall = { slot: redisClusterSlot(key), command: 'noSuchMethod', args: [key] }
    await expect(fanOut.all([failing, unknown])).rejects.toThrow(TypeError)
  })
})
