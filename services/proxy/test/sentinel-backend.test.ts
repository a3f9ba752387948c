import { describe, expect, it } from 'vitest'
import { BackendAddressError, createProxy, RespProxy } from '../src/index.js'

describe('a redis+sentinel:// backend given in code', () => {
  it('refuses a bad URL naming the part that is wrong, without its password', async () => {
    const attempt = createProxy({
      backend: 'redis+sentinel://app:hunter2@127.0.0.1:26379/mymaster/x',
      port: 0,
    })
    await expect(attempt).rejects.toThrow(BackendAddressError)
    await expect(attempt).rejects.toThrow(
      "invalid Redis URL 'redis+sentinel://app:***@127.0.0.1:26379/mymaster/x': db: expected a non-negative integer, got 'x'",
    )
  })

  it('refuses the cluster option with it, and a RespProxy made without createProxy (which finds the primary first)', async () => {
    await expect(
      createProxy({ backend: 'redis+sentinel://127.0.0.1:26379/mymaster', cluster: true, port: 0 }),
    ).rejects.toThrow('a redis+sentinel:// backend is not a Redis Cluster')
    expect(() => new RespProxy({ backend: 'redis+sentinel://127.0.0.1:26379/mymaster' })).toThrow(
      BackendAddressError,
    )
  })
})
