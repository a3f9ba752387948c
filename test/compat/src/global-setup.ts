import { ensureRedis, freePort } from '@heatsink/devservices'
import type { TestProject } from 'vitest/node'
import './provided.js'

/*
 * Each compat project gets a redis-server of its own on a free port, for its lifetime: ioredis's helpers run
 * FLUSHALL after every test, which must never reach the shared Redis (REDIS_URL, 127.0.0.1:6379) or another
 * project's server. ensureRedis starts a private server when nothing listens at the URL it is given, so it is
 * handed a port nothing listens on; REDIS_URL is never read.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const url = `redis://127.0.0.1:${await freePort()}`
  const redis = await ensureRedis({ url })
  if (!redis.started) {
    await redis.stop()
    throw new Error(`${project.name}: something started listening at ${url} first; run again`)
  }
  const port = Number(new URL(redis.url).port)
  if (project.config.provide?.compatClient !== 'proxy') {
    project.provide('compatRedisPort', port)
    return () => redis.stop()
  }
  // The proxy project: plain ioredis talks to the Heatsink proxy, which stands in front of the private server.
  const { createProxy } = await import('@heatsink/proxy')
  // autopipelining.ts reads a 600 x 1 MB pipeline: more than the proxy's default per-client output limit
  // (256 MiB), which cuts off a client that does not keep up; Redis' own default for normal clients is no limit.
  const { proxy, port: proxyPort } = await createProxy({
    backend: redis.url,
    port: 0,
    clientOutputLimitBytes: 2 * 1024 ** 3,
  })
  project.provide('compatRedisPort', proxyPort)
  return async () => {
    await proxy.close(1000)
    await redis.stop()
  }
}
