import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  environmentProblems,
  envRedisUrl,
  InvalidRedisUrlError,
  isSentinelUrl,
  parseSentinelUrl,
  redactUrl,
} from '../src/index.js'

function failure(url: string): InvalidRedisUrlError {
  try {
    parseSentinelUrl(url)
  } catch (error) {
    if (error instanceof InvalidRedisUrlError) return error
    throw error
  }
  throw new Error(`${url} was accepted`)
}

describe('parseSentinelUrl', () => {
  it('reads the sentinels, the master name and the database into ioredis options', () => {
    expect(
      parseSentinelUrl('redis+sentinel://10.0.0.1:26379,sentinel-b:26380,[::1]:5000/mymaster/3'),
    ).toEqual({
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: 'sentinel-b', port: 26380 },
        { host: '::1', port: 5000 },
      ],
      name: 'mymaster',
      db: 3,
      enableTLSForSentinelMode: false,
    })
  })

  it("takes Sentinel's default port 26379 and database 0 when they are left out", () => {
    const options = parseSentinelUrl('redis+sentinel://a,b:1/cache')
    expect(options.sentinels).toEqual([
      { host: 'a', port: 26379 },
      { host: 'b', port: 1 },
    ])
    expect(options.db).toBe(0)
  })

  it('logs in to the data nodes with the userinfo and to the sentinels with sentinelUsername/sentinelPassword', () => {
    const options = parseSentinelUrl(
      'redis+sentinel://app:p%40ss@h:26379/mymaster?sentinelUsername=watch&sentinelPassword=s%3Dcret',
    )
    expect(options).toMatchObject({
      username: 'app',
      password: 'p@ss',
      sentinelUsername: 'watch',
      sentinelPassword: 's=cret',
    })
    expect(parseSentinelUrl('redis+sentinel://:only@h/m').username).toBeUndefined()
    expect(parseSentinelUrl('redis+sentinel://:only@h/m').password).toBe('only')
  })

  it("takes Sentinel's password from the environment unless the URL gives one", () => {
    expect(parseSentinelUrl('redis+sentinel://h/m', { sentinelPassword: 'env' }).sentinelPassword).toBe('env')
    const url = 'redis+sentinel://h/m?sentinelPassword=url'
    expect(parseSentinelUrl(url, { sentinelPassword: 'env' }).sentinelPassword).toBe('url')
  })

  it('turns on TLS to the data nodes with rediss+sentinel:// and to the sentinels with sentinelTls=true', () => {
    expect(parseSentinelUrl('rediss+sentinel://h/m')).toMatchObject({
      tls: {},
      enableTLSForSentinelMode: true,
    })
    expect(parseSentinelUrl('rediss+sentinel://h/m').sentinelTLS).toBeUndefined()
    expect(parseSentinelUrl('redis+sentinel://h/m?sentinelTls=true')).toMatchObject({
      sentinelTLS: {},
      enableTLSForSentinelMode: false,
    })
  })

  it('names the part of the URL that is wrong', () => {
    expect(failure('redis+sentinel://h:26379').part).toBe('master name')
    expect(failure('redis+sentinel://h:26379/').part).toBe('master name')
    expect(failure('redis+sentinel:///mymaster').part).toBe('sentinels')
    expect(failure('redis+sentinel://h:port/mymaster').message).toContain("expected host:port, got 'h:port'")
    expect(failure('redis+sentinel://h:70000/mymaster').part).toBe('sentinels')
    expect(failure('redis+sentinel://h/mymaster/x').message).toContain(
      "db: expected a non-negative integer, got 'x'",
    )
    expect(failure('redis+sentinel://h/mymaster/0/1').part).toBe('path')
    expect(failure('redis+sentinel://h/m?sentinelPasword=x').message).toContain(
      "unknown option 'sentinelPasword'",
    )
    expect(failure('redis+sentinel://h/m?sentinelTls=yes').part).toBe('query')
    expect(failure('redis+sentinel://h/').code).toBe('E_INVALID_REDIS_URL')
  })

  it('never echoes a password in its messages', () => {
    const error = failure('redis+sentinel://app:hunter2@h/m/x?sentinelPassword=swordfish')
    expect(error.message).toContain("'redis+sentinel://app:***@h/m/x?sentinelPassword=***'")
    expect(error.message).not.toMatch(/hunter2|swordfish/)
  })
})

describe('Redis URLs in the environment', () => {
  const Environment = z.object({ REDIS_URL: envRedisUrl })
  const problems = (url: string) => {
    const result = Environment.safeParse({ REDIS_URL: url })
    return result.success ? [] : environmentProblems(result.error)
  }

  it('accepts one server and the Sentinel form', () => {
    expect(isSentinelUrl('redis+sentinel://h/m')).toBe(true)
    expect(isSentinelUrl('redis://h')).toBe(false)
    for (const url of [
      'redis://h:6379/1',
      'rediss://u:p@h',
      'redis+sentinel://a,b/m',
      'rediss+sentinel://a/m/2',
    ]) {
      expect(problems(url)).toEqual([])
    }
  })

  it('says what is expected, with the password hidden', () => {
    expect(problems('http://u:secret@h')).toEqual([
      "REDIS_URL: expected a redis://, rediss://, redis+sentinel:// or rediss+sentinel:// URL, got 'http://u:***@h'",
    ])
    expect(problems('redis+sentinel://u:secret@h')).toEqual([
      "REDIS_URL: invalid Redis URL 'redis+sentinel://u:***@h': master name: missing: expected /<master-name> after the sentinels",
    ])
    expect(redactUrl('redis://:pw@h')).toBe('redis://:***@h')
  })
})
