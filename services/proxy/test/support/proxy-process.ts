import { type ChildProcess, spawn } from 'node:child_process'
import { freePort } from '@heatsink/devservices'
import { REPO_ROOT, testNamespace } from '@heatsink/test'
import { afterAll } from 'vitest'
import { waitFor } from './proxy-fixture.js'

/** A proxy process (`node services/proxy/dist/main.js`, as the container image runs it) serving clients. */
export interface ProxyProcess {
  child: ChildProcess
  port: number
  namespace: string
  /** Everything it has written to stdout and stderr. */
  output(): string
}

const children: ChildProcess[] = []
// Stopped after the file, so that one proxy may serve every test of it.
afterAll(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL')
})

/** Starts the proxy in front of `redisUrl` on free ports with a namespace of its own; resolves once its agent is ready. */
export async function startProxyProcess(
  redisUrl: string,
  env: Record<string, string> = {},
): Promise<ProxyProcess> {
  const port = await freePort()
  const namespace = testNamespace()
  const child = spawn('node', ['services/proxy/dist/main.js'], {
    cwd: REPO_ROOT,
    env: {
      PATH: process.env.PATH,
      REDIS_URL: redisUrl,
      PORT: String(port),
      HEATSINK_PROXY_METRICS_PORT: String(await freePort()),
      HEATSINK_NAMESPACE: namespace,
      ...env,
    },
  })
  children.push(child)
  let output = ''
  const collect = (text: string) => {
    output += text
  }
  child.stdout?.setEncoding('utf8').on('data', collect)
  child.stderr?.setEncoding('utf8').on('data', collect)
  await waitFor(() => output.includes('"msg":"agent ready"'), 'the proxy to be ready', 15_000)
  return { child, port, namespace, output: () => output }
}
