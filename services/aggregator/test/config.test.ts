// Longer than 300 lines: one function (loadConfig) and its table of environment variables, each with its default
// and its refusal of a bad value.
import { hostname } from 'node:os'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../src/config.js'
import { ConfigError } from '../src/errors.js'

function problems(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env)
  } catch (error) {
    if (error instanceof ConfigError) return error.problems
    throw error
  }
  throw new Error('expected a ConfigError')
}

describe('loadConfig', () => {
  it('fills in every default, on loopback without an API token', () => {
    expect(loadConfig({}, '/srv/app')).toEqual({
      port: 8080,
      host: '127.0.0.1',
      ignoredHost: null,
      redisUrl: 'redis://127.0.0.1:6379',
      redisUrlVariable: 'REDIS_URL',
      sentinelPassword: null,
      redisCluster: false,
      databaseUrl: null,
      dataDir: '/srv/app/.heatsink/pglite',
      namespace: 'heatsink',
      apiToken: null,
      registryKey: null,
      hotRps: 1000,
      coolRps: 500,
      coolSeconds: 30,
      windowMs: 1000,
      counterShards: 1,
      replicaId: `${hostname()}-${process.pid}`,
      policy: {
        writeShare: 0.3,
        missShare: 0.1,
        splitWriteCapacity: 10_000,
        maxSplitFactor: 64,
        replicaReadShare: null,
      },
      maxReportAgeMs: 30_000,
      shutdownTimeoutMs: 10_000,
      maxClockSkewMs: 5000,
      ingestStallMs: 3000,
      missStorm: { minPerSecond: 100, factor: 5, baselineWindows: 10 },
      contention: { minPerSecond: 10, windows: 3 },
      sharesDataRedis: true,
      logLevel: 'info',
      nodeRedis: {
        redisUrl: 'redis://127.0.0.1:6379',
        redisUrlVariable: 'REDIS_URL',
        redisCluster: false,
        sentinelPassword: null,
      },
      nodeSampleMs: 1000,
    })
  })

  it('samples the nodes of REDIS_URL (the Redis agents use), not of a control Redis, and takes 0 to sample none', () => {
    const config = loadConfig({
      REDIS_URL: 'redis://10.0.0.1:7000',
      HEATSINK_REDIS_CLUSTER: 'true',
      HEATSINK_CONTROL_REDIS_URL: 'redis://10.0.0.2:6379',
      HEATSINK_NODE_SAMPLE_MS: '0',
    })
    expect(config).toMatchObject({
      redisUrl: 'redis://10.0.0.2:6379',
      redisCluster: false,
      nodeRedis: { redisUrl: 'redis://10.0.0.1:7000', redisCluster: true },
      nodeSampleMs: 0,
    })
    expect(problems({ HEATSINK_NODE_SAMPLE_MS: '1s' })).toEqual([
      "HEATSINK_NODE_SAMPLE_MS: expected a non-negative integer, got '1s'",
    ])
  })

  it('reads the miss storm and write contention rules, and names the variable of a bad value', () => {
    const config = loadConfig({
      HEATSINK_MISS_STORM_MIN_RPS: '250',
      HEATSINK_MISS_STORM_FACTOR: '3',
      HEATSINK_MISS_STORM_BASELINE_WINDOWS: '20',
    })
    expect(config.missStorm).toEqual({ minPerSecond: 250, factor: 3, baselineWindows: 20 })
    expect(
      problems({
        HEATSINK_MISS_STORM_MIN_RPS: '0',
        HEATSINK_MISS_STORM_FACTOR: '0.5',
        HEATSINK_MISS_STORM_BASELINE_WINDOWS: '2.5',
      }),
    ).toEqual([
      "HEATSINK_MISS_STORM_MIN_RPS: expected a positive number, got '0'",
      "HEATSINK_MISS_STORM_FACTOR: expected a number of at least 1, got '0.5'",
      "HEATSINK_MISS_STORM_BASELINE_WINDOWS: expected an integer from 1 to 50, got '2.5'",
    ])
    expect(
      loadConfig({ HEATSINK_CONTENTION_ABORTS_RPS: '2.5', HEATSINK_CONTENTION_WINDOWS: '5' }).contention,
    ).toEqual({ minPerSecond: 2.5, windows: 5 })
    expect(problems({ HEATSINK_CONTENTION_WINDOWS: '0' })).toEqual([
      "HEATSINK_CONTENTION_WINDOWS: expected an integer from 1 to 50, got '0'",
    ])
    // With a control Redis apart from the application's, the aggregator cannot tell which node owns a key.
    expect(loadConfig({ HEATSINK_CONTROL_REDIS_URL: 'redis://10.0.0.9:6379' }).sharesDataRedis).toBe(false)
  })

  it('reads the mitigation policy and rejects a split cap that is not a power of two', () => {
    const config = loadConfig({
      HEATSINK_WRITE_SHARE: '0.5',
      HEATSINK_MISS_SHARE: '0.2',
      HEATSINK_SPLIT_WRITE_CAPACITY: '5000',
      HEATSINK_SPLIT_MAX: '16',
      HEATSINK_REPLICA_READ_SHARE: '0.05',
      HEATSINK_MAX_REPORT_AGE_MS: '10000',
    })
    expect(config.policy).toEqual({
      writeShare: 0.5,
      missShare: 0.2,
      splitWriteCapacity: 5000,
      maxSplitFactor: 16,
      replicaReadShare: 0.05,
    })
    expect(config.maxReportAgeMs).toBe(10_000)
    expect(() => loadConfig({ HEATSINK_SPLIT_MAX: '12' })).toThrow(
      /HEATSINK_SPLIT_MAX: expected a power of two/,
    )
    expect(() => loadConfig({ HEATSINK_WRITE_SHARE: '1.5' })).toThrow(
      /HEATSINK_WRITE_SHARE: expected a number from 0 to 1/,
    )
  })

  it('reads the clock skew and the ingest stall bound, and names a bad value of either', () => {
    expect(
      loadConfig({ HEATSINK_MAX_CLOCK_SKEW_MS: '250', HEATSINK_INGEST_STALL_MS: '10000' }),
    ).toMatchObject({
      maxClockSkewMs: 250,
      ingestStallMs: 10_000,
    })
    // No skew allowed at all is a valid choice, for agents and aggregators on one host's clock.
    expect(loadConfig({ HEATSINK_MAX_CLOCK_SKEW_MS: '0' }).maxClockSkewMs).toBe(0)
    expect(problems({ HEATSINK_MAX_CLOCK_SKEW_MS: '-1', HEATSINK_INGEST_STALL_MS: '0' })).toEqual([
      "HEATSINK_MAX_CLOCK_SKEW_MS: expected a non-negative integer, got '-1'",
      "HEATSINK_INGEST_STALL_MS: expected a positive integer, got '0'",
    ])
    expect(problems({ HEATSINK_MAX_CLOCK_SKEW_MS: '5s', HEATSINK_INGEST_STALL_MS: '1.5' })).toEqual([
      "HEATSINK_MAX_CLOCK_SKEW_MS: expected a non-negative integer, got '5s'",
      "HEATSINK_INGEST_STALL_MS: expected a positive integer, got '1.5'",
    ])
  })

  it('reads the shutdown deadline and names a bad one', () => {
    expect(loadConfig({ HEATSINK_SHUTDOWN_TIMEOUT_MS: '3000' }).shutdownTimeoutMs).toBe(3000)
    expect(problems({ HEATSINK_SHUTDOWN_TIMEOUT_MS: '0' })).toEqual([
      "HEATSINK_SHUTDOWN_TIMEOUT_MS: expected a positive integer, got '0'",
    ])
    expect(problems({ HEATSINK_SHUTDOWN_TIMEOUT_MS: '10s' })).toEqual([
      "HEATSINK_SHUTDOWN_TIMEOUT_MS: expected a positive integer, got '10s'",
    ])
  })

  it('rejects an API token that could never match a Bearer header, without printing it', () => {
    // Surrounding whitespace (a secret file's final newline) is trimmed, and the token is then one word.
    expect(loadConfig({ HEATSINK_API_TOKEN: ' s3cret-Token_1.~+/=\n' }).apiToken).toBe('s3cret-Token_1.~+/=')
    expect(problems({ HEATSINK_API_TOKEN: 'two words' })).toEqual([
      "HEATSINK_API_TOKEN: expected printable ASCII without spaces (it is sent as one word after 'Bearer '), got a value containing whitespace",
    ])
    expect(problems({ HEATSINK_API_TOKEN: 'tab\tinside' })[0]).toMatch(/containing whitespace$/)
    expect(problems({ HEATSINK_API_TOKEN: 'pässword' })).toEqual([
      "HEATSINK_API_TOKEN: expected printable ASCII without spaces (it is sent as one word after 'Bearer '), got a value containing a character outside printable ASCII",
    ])
    expect(() => loadConfig({ HEATSINK_API_TOKEN: 'two words' })).not.toThrow(/two words/)
  })

  it('reads a registry key of at least 32 printable ASCII characters, without printing a bad one', () => {
    const key = 'registry-key-0123456789abcdefghij'
    expect(loadConfig({ HEATSINK_REGISTRY_KEY: `${key}\n` }).registryKey).toBe(key)
    expect(loadConfig({ HEATSINK_REGISTRY_KEY: '' }).registryKey).toBeNull()
    expect(problems({ HEATSINK_REGISTRY_KEY: 'too-short' })).toEqual([
      'HEATSINK_REGISTRY_KEY: expected at least 32 characters, got 9',
    ])
    expect(problems({ HEATSINK_REGISTRY_KEY: `${key} more` })).toEqual([
      'HEATSINK_REGISTRY_KEY: expected printable ASCII without spaces',
    ])
    expect(() => loadConfig({ HEATSINK_REGISTRY_KEY: 'too-short' })).not.toThrow(/too-short'/)
  })

  it('listens on every interface with a token, and forces loopback without one', () => {
    expect(loadConfig({ HEATSINK_API_TOKEN: 't' }).host).toBe('0.0.0.0')
    expect(loadConfig({ HEATSINK_API_TOKEN: 't', HOST: '10.0.0.5' }).host).toBe('10.0.0.5')
    expect(loadConfig({ HOST: '0.0.0.0' })).toMatchObject({ host: '127.0.0.1', ignoredHost: '0.0.0.0' })
  })

  it('reads every variable, treats empty ones as unset, and derives the cool rate from the hot one', () => {
    const config = loadConfig(
      {
        PORT: '9090',
        REDIS_URL: 'rediss://cache:6380',
        DATABASE_URL: 'postgresql://u@db/heatsink',
        HEATSINK_DATA_DIR: '/var/lib/heatsink',
        HEATSINK_NAMESPACE: 'shop:prod',
        HEATSINK_HOT_RPS: '3000',
        HEATSINK_COOL_SECONDS: '12.5',
        HEATSINK_WINDOW_MS: '500',
        HEATSINK_COUNTER_SHARDS: '16',
        HEATSINK_REPLICA_ID: 'replica-a',
        HEATSINK_API_TOKEN: '',
        LOG_LEVEL: 'debug',
      },
      '/srv',
    )
    expect(config).toMatchObject({
      port: 9090,
      redisUrl: 'rediss://cache:6380',
      databaseUrl: 'postgresql://u@db/heatsink',
      dataDir: '/var/lib/heatsink',
      namespace: 'shop:prod',
      apiToken: null,
      hotRps: 3000,
      coolRps: 1500,
      coolSeconds: 12.5,
      windowMs: 500,
      counterShards: 16,
      replicaId: 'replica-a',
      logLevel: 'debug',
    })
  })

  it('uses HEATSINK_CONTROL_REDIS_URL when set, whatever REDIS_URL says, since it touches only Heatsink state', () => {
    const env = { REDIS_URL: 'redis://cache:6379' }
    expect(loadConfig(env).redisUrl).toBe('redis://cache:6379')
    expect(loadConfig({ ...env, HEATSINK_CONTROL_REDIS_URL: 'rediss://heatsink:6380/1' }).redisUrl).toBe(
      'rediss://heatsink:6380/1',
    )
    expect(loadConfig({ HEATSINK_CONTROL_REDIS_URL: 'redis://heatsink' }).redisUrl).toBe('redis://heatsink')
    expect(problems({ HEATSINK_CONTROL_REDIS_URL: 'heatsink:6379' })).toEqual([
      "HEATSINK_CONTROL_REDIS_URL: expected a redis://, rediss://, redis+sentinel:// or rediss+sentinel:// URL, got 'heatsink:6379'",
    ])
  })

  it("takes a redis+sentinel:// URL and Sentinel's password, and names the wrong part of one without its password", () => {
    const config = loadConfig({
      REDIS_URL: 'redis+sentinel://s1:26379,s2:26379/mymaster/2',
      HEATSINK_SENTINEL_PASSWORD: 'watchword',
    })
    expect(config).toMatchObject({
      redisUrl: 'redis+sentinel://s1:26379,s2:26379/mymaster/2',
      sentinelPassword: 'watchword',
    })
    expect(problems({ REDIS_URL: 'redis+sentinel://app:hunter2@s1:26379' })).toEqual([
      "REDIS_URL: invalid Redis URL 'redis+sentinel://app:***@s1:26379': master name: missing: expected /<master-name> after the sentinels",
    ])
  })

  it('takes HEATSINK_REDIS_CLUSTER=true as REDIS_URL naming one node of a Redis Cluster, not a control Redis', () => {
    const env = { REDIS_URL: 'redis://node-1:7000' }
    expect(loadConfig(env).redisCluster).toBe(false)
    expect(loadConfig({ ...env, HEATSINK_REDIS_CLUSTER: 'false' }).redisCluster).toBe(false)
    expect(loadConfig({ ...env, HEATSINK_REDIS_CLUSTER: 'true' })).toMatchObject({
      redisUrl: 'redis://node-1:7000',
      redisCluster: true,
    })
    // The flag describes REDIS_URL only; a control Redis has its own.
    expect(
      loadConfig({ ...env, HEATSINK_REDIS_CLUSTER: 'true', HEATSINK_CONTROL_REDIS_URL: 'redis://heatsink' }),
    ).toMatchObject({ redisUrl: 'redis://heatsink', redisCluster: false })
    expect(
      loadConfig({
        ...env,
        HEATSINK_CONTROL_REDIS_URL: 'redis://hs-node:7000',
        HEATSINK_CONTROL_REDIS_CLUSTER: 'true',
      }),
    ).toMatchObject({ redisUrl: 'redis://hs-node:7000', redisCluster: true })
    expect(problems({ ...env, HEATSINK_CONTROL_REDIS_CLUSTER: 'true' })).toEqual([
      'HEATSINK_CONTROL_REDIS_CLUSTER: expected HEATSINK_CONTROL_REDIS_URL to name a redis:// or rediss:// node of the Cluster',
    ])
    expect(problems({ ...env, HEATSINK_REDIS_CLUSTER: 'yes' })).toEqual([
      "HEATSINK_REDIS_CLUSTER: expected 'true' or 'false', got 'yes'",
    ])
    expect(problems({ REDIS_URL: 'redis://node-1:7000/2', HEATSINK_REDIS_CLUSTER: 'true' })).toEqual([
      "REDIS_URL: expected database 0 with HEATSINK_REDIS_CLUSTER=true (a Redis Cluster has no other), got 'redis://node-1:7000/2'",
    ])
    expect(
      loadConfig({ REDIS_URL: 'redis://node-1:7000/0', HEATSINK_REDIS_CLUSTER: 'true' }).redisCluster,
    ).toBe(true)
  })

  it('names every bad value with what was expected and what it got', () => {
    expect(
      problems({
        PORT: '70000',
        REDIS_URL: 'localhost:6379',
        DATABASE_URL: 'mysql://db',
        HEATSINK_NAMESPACE: 'has{braces}',
        HEATSINK_HOT_RPS: 'abc',
        HEATSINK_COOL_SECONDS: '-1',
        HEATSINK_WINDOW_MS: '2.5',
        HEATSINK_COUNTER_SHARDS: '0',
        LOG_LEVEL: 'loud',
      }),
    ).toEqual([
      "PORT: expected an integer port from 0 to 65535, got '70000'",
      "REDIS_URL: expected a redis://, rediss://, redis+sentinel:// or rediss+sentinel:// URL, got 'localhost:6379'",
      "DATABASE_URL: expected a postgres:// or postgresql:// URL, got 'mysql://db'",
      "HEATSINK_NAMESPACE: expected 1 to 64 characters of A-Z, a-z, 0-9, '_', '.', ':' or '-', got 'has{braces}'",
      "HEATSINK_HOT_RPS: expected a positive number, got 'abc'",
      "HEATSINK_COOL_SECONDS: expected a positive number, got '-1'",
      "HEATSINK_WINDOW_MS: expected a positive integer, got '2.5'",
      "HEATSINK_COUNTER_SHARDS: expected an integer from 1 to 1024, got '0'",
      "LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got 'loud'",
    ])
  })

  it('requires the cool rate below the hot rate', () => {
    expect(problems({ HEATSINK_HOT_RPS: '100', HEATSINK_COOL_RPS: '100' })).toEqual([
      "HEATSINK_COOL_RPS: expected a number below HEATSINK_HOT_RPS (100), got '100'",
    ])
    expect(problems({ HEATSINK_COOL_RPS: '1500' })).toEqual([
      "HEATSINK_COOL_RPS: expected a number below HEATSINK_HOT_RPS (1000), got '1500'",
    ])
    expect(loadConfig({ HEATSINK_COOL_RPS: '999' }).coolRps).toBe(999)
  })

  it('says so in the message of the error it throws', () => {
    expect(() => loadConfig({ HEATSINK_HOT_RPS: 'abc' })).toThrow(
      "invalid configuration:\n  HEATSINK_HOT_RPS: expected a positive number, got 'abc'",
    )
  })
})
