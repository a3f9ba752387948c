#!/usr/bin/env node
import cluster from 'node:cluster'
import { loadProxyConfig } from './config.js'
import { ConfigError } from './errors.js'
import { serve } from './serve.js'

// The process entry: `node services/proxy/dist/main.js`, configured by environment variables (docs/operations.md).
// With HEATSINK_PROXY_WORKERS above 1 this process forks that many workers sharing the RESP port and passes
// SIGTERM on to them; it exits once they all have, with the first non-zero exit code of theirs.

let config: ReturnType<typeof loadProxyConfig>
try {
  config = loadProxyConfig(process.env)
} catch (error) {
  if (!(error instanceof ConfigError)) throw error
  // Before a logger exists; one readable line per bad variable is what the operator needs.
  process.stderr.write(`heatsink proxy: ${error.message}\n`)
  process.exit(2)
}

if (config.workers <= 1) await serve(config)
else if (cluster.isPrimary) superviseWorkers(config.workers)
else await serve(config, Number(process.env.HEATSINK_PROXY_WORKER))

function superviseWorkers(count: number): void {
  let exitCode = 0
  let stopping = false
  for (let i = 0; i < count; i++) cluster.fork({ HEATSINK_PROXY_WORKER: String(i) })
  cluster.on('exit', (_worker, code) => {
    if (code !== 0 && exitCode === 0) exitCode = code ?? 1
    // A worker that dies outside a shutdown takes the proxy down with it: the orchestrator restarts the whole.
    if (!stopping) {
      stopping = true
      for (const other of Object.values(cluster.workers ?? {})) other?.process.kill('SIGTERM')
    }
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(exitCode)
  })
  const stop = (signal: NodeJS.Signals) => {
    stopping = true
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal)
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}
