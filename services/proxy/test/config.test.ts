import { describe, expect, it } from 'vitest'
import { LOOPBACK_HOST, loadProxyConfig } from '../src/config.js'
import { ConfigError } from '../src/errors.js'

describe('the proxy configuration from the environment', () => {
  it('has defaults: port 6380, loopback without a password, Redis on localhost', () => {
    const config = loadProxyConfig({})
    expect(config.port).toBe(6380)
    expect(config.host).toBe(LOOPBACK_HOST)
    expect(config.backend).toBe('redis://127.0.0.1:6379')
    expect(config.metricsPort).toBe(9380)
    expect(config.passwords.size).toBe(0)
    expect(config.l1).toEqual({ maxEntries: undefined, maxBytes: undefined })
    expect(loadProxyConfig({ HEATSINK_L1_MAX_MB: '8' }).l1.maxBytes).toBe(8 * 1024 * 1024)
  })

  it('listens on every interface once a password is set, and takes users', () => {
    const config = loadProxyConfig({
      HEATSINK_PROXY_PASSWORD: 's3cret',
      HEATSINK_PROXY_USERS: 'app:a:b,ops:x',
    })
    expect(config.host).toBe('0.0.0.0')
    expect([...config.passwords]).toEqual([
      ['app', 'a:b'],
      ['ops', 'x'],
      ['default', 's3cret'],
    ])
  })

  it('names every bad variable and what it expected, never echoing a password', () => {
    let error: unknown
    try {
      loadProxyConfig({
        PORT: '70000',
        REDIS_URL: 'http://x',
        HEATSINK_PROXY_BACKEND_CONNECTIONS: '0',
        HEATSINK_PROXY_USERS: 'nopassword',
        LOG_LEVEL: 'loud',
        HEATSINK_L1_MAX_ENTRIES: '100',
      })
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ConfigError)
    const message = (error as Error).message
    expect(message).toContain("PORT: expected an integer port from 0 to 65535, got '70000'")
    expect(message).toContain(
      "REDIS_URL: expected a redis://, rediss://, redis+sentinel:// or rediss+sentinel:// URL, got 'http://x'",
    )
    expect(message).toContain("HEATSINK_PROXY_BACKEND_CONNECTIONS: expected an integer from 1 to 64, got '0'")
    expect(message).toContain("HEATSINK_PROXY_USERS: expected comma-separated 'user:password' pairs")
    expect(message).toContain('LOG_LEVEL: expected one of')
    expect(message).toContain("HEATSINK_L1_MAX_ENTRIES: expected an integer from 512 to 2048, got '100'")
    expect(message).not.toContain('nopassword')
  })

  it('takes HEATSINK_CONTROL_REDIS_URL for its agent, and refuses a value that is not a redis:// or rediss:// URL', () => {
    expect(loadProxyConfig({}).control).toBeUndefined()
    const config = loadProxyConfig({
      REDIS_URL: 'redis://cache:6379',
      HEATSINK_CONTROL_REDIS_URL: 'rediss://heatsink:6380/2',
    })
    expect(config).toMatchObject({ backend: 'redis://cache:6379', control: 'rediss://heatsink:6380/2' })
    for (const bad of ['heatsink:6379', 'http://heatsink:6379', 'redis:///tmp/redis.sock']) {
      expect(() => loadProxyConfig({ HEATSINK_CONTROL_REDIS_URL: bad })).toThrow(
        `HEATSINK_CONTROL_REDIS_URL: expected a redis://, rediss://, redis+sentinel:// or rediss+sentinel:// URL, got '${bad}'`,
      )
    }
  })

  it("takes redis+sentinel:// for the backend and the control Redis, with Sentinel's password from the environment", () => {
    const config = loadProxyConfig({
      REDIS_URL: 'redis+sentinel://s1:26379,s2:26379/mymaster/1',
      HEATSINK_CONTROL_REDIS_URL: 'rediss+sentinel://s1,s2/heatsink?sentinelTls=true',
      HEATSINK_SENTINEL_PASSWORD: 'watchword',
    })
    expect(config).toMatchObject({
      backend: 'redis+sentinel://s1:26379,s2:26379/mymaster/1',
      control: 'rediss+sentinel://s1,s2/heatsink?sentinelTls=true',
      sentinelPassword: 'watchword',
    })
    expect(() => loadProxyConfig({ REDIS_URL: 'redis+sentinel://app:hunter2@s1:26379/m/x' })).toThrow(
      "REDIS_URL: invalid Redis URL 'redis+sentinel://app:***@s1:26379/m/x': db: expected a non-negative integer, got 'x'",
    )
  })
})
