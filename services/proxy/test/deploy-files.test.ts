import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { REPO_ROOT } from '@heatsink/test'
import { describe, expect, it } from 'vitest'
import { parse, parseAllDocuments } from 'yaml'
import { loadProxyConfig } from '../src/config.js'

const deploy = join(REPO_ROOT, 'deploy')
const read = (...path: string[]) => readFileSync(join(deploy, ...path), 'utf8')
// The image's working directory is the deployed proxy package (test/e2e/images.test.ts starts it from there).
const PROXY_COMMAND = ['node', 'dist/main.js']
// Between the proxy's own exit deadline and Kubernetes' SIGKILL: the last log lines and the exit code.
const KILL_MARGIN_SECONDS = 5

interface K8sObject {
  kind: string
  metadata: { name: string }
  // biome-ignore lint/suspicious/noExplicitAny: manifests are checked field by field below
  spec?: any
  data?: Record<string, string>
  stringData?: Record<string, string>
}

function manifests(): K8sObject[] {
  return readdirSync(join(deploy, 'k8s-proxy'))
    .filter((file) => file !== 'kustomization.yaml')
    .flatMap((file) => parseAllDocuments(read('k8s-proxy', file)).map((doc) => doc.toJS() as K8sObject))
}

function find(kind: string): K8sObject {
  const found = manifests().find((manifest) => manifest.kind === kind)
  if (found === undefined) throw new Error(`no ${kind} in deploy/k8s-proxy`)
  return found
}

describe('the proxy deployment files', () => {
  it('the Dockerfile is multi-stage, runs as a non-root user with a /healthz check, and starts the deployed package', () => {
    const dockerfile = read('proxy.Dockerfile')
    expect(dockerfile.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2)
    expect(dockerfile).toMatch(/^USER node$/m)
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n?.*\/healthz/m)
    expect(JSON.parse(dockerfile.match(/^CMD (\[.*\])$/m)?.[1] ?? 'null')).toEqual(PROXY_COMMAND)
  })

  it('the Kubernetes manifests form a valid configuration, probe the ports the proxy listens on, and drain in time', () => {
    const deployment = find('Deployment')
    const container = deployment.spec.template.spec.containers[0]
    expect(container.command).toEqual(PROXY_COMMAND)
    const config = loadProxyConfig({
      ...find('ConfigMap').data,
      ...find('Secret').stringData,
      HEATSINK_AGENT_ID: 'pod-0',
    })
    const port = (name: string) =>
      container.ports.find((p: { name: string }) => p.name === name)?.containerPort
    expect(port('resp')).toBe(config.port)
    expect(port('metrics')).toBe(config.metricsPort)
    expect(config.host).toBe('0.0.0.0')
    expect(config.passwords.size).toBe(1)
    expect(container.readinessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' })
    // After the preStop sleep the proxy drains and exits by its own deadline, before Kubernetes' SIGKILL (the grace
    // period counts from the start of preStop; 30 s when the field is absent).
    const [, preStopSeconds] = container.lifecycle.preStop.exec.command
    expect(
      Number(preStopSeconds) + config.shutdownTimeoutMs / 1000 + KILL_MARGIN_SECONDS,
    ).toBeLessThanOrEqual(deployment.spec.template.spec.terminationGracePeriodSeconds ?? 30)
    const labels = deployment.spec.template.metadata.labels
    expect(labels).toMatchObject(find('Service').spec.selector)
    expect(labels).toMatchObject(find('PodDisruptionBudget').spec.selector.matchLabels)
  })

  it('the compose overlay runs the proxy image against the compose Redis with a valid configuration', () => {
    const compose = parse(read('compose.proxy.yaml')) as {
      services: { proxy: { build: unknown; environment: Record<string, string>; ports: string[] } }
    }
    const proxy = compose.services.proxy
    expect(proxy.build).toEqual({ context: '..', dockerfile: 'deploy/proxy.Dockerfile', target: 'proxy' })
    const config = loadProxyConfig({ ...proxy.environment, HEATSINK_PROXY_PASSWORD: 'secret' })
    expect(config.backend).toBe('redis://redis:6379')
    expect(proxy.ports).toContain(`${config.port}:${config.port}`)
    expect(proxy.ports).toContain(`${config.metricsPort}:${config.metricsPort}`)
  })
})
