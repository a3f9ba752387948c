import { Redis } from 'ioredis'
import { PacedStream } from './paced-stream.js'
import { SCENARIO } from './scenario.js'

// The quickstart's client in "any language": plain ioredis, no Heatsink code at all, pointed at the proxy instead
// of Redis. It reads a celebrity's profile at the scenario's rate; the proxy is what detects and serves it.

const port = Number(process.env.PROXY_PORT)
const startedAt = Number(process.env.SCENARIO_START ?? Date.now())
const SLICE_MS = 10
const { key, startSeconds, rps } = SCENARIO.proxied

const redis = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1 })
redis.on('error', () => {})

const stream = new PacedStream(rps, startSeconds)

const driver = setInterval(() => {
  for (let i = 0, n = stream.due(Date.now() - startedAt); i < n; i++) {
    void redis.get(key).catch(() => {})
  }
}, SLICE_MS)

function stop(): void {
  clearInterval(driver)
  redis.disconnect()
  process.exit(0)
}
process.on('SIGTERM', stop)
process.on('disconnect', stop)
