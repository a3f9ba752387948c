import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '@heatsink/aggregator'
import { REPO_ROOT } from '@heatsink/test'
import { describe, expect, it } from 'vitest'
import { parse, parseAllDocuments } from 'yaml'
import { execForm, parseDockerfile } from './support/dockerfile.js'

const deploy = join(REPO_ROOT, 'deploy')
const read = (...path: string[]) => readFileSync(join(deploy, ...path), 'utf8')
// The image's working directory is the deployed aggregator package (images.test.ts starts it from there).
const IMAGE_COMMAND = ['node', 'dist/main.js']
// Between the aggregator's own exit deadline and Kubernetes' SIGKILL: the last log lines and the exit code.
const KILL_MARGIN_SECONDS = 5

interface K8sObject {
  kind: string
  metadata: { name: string; labels?: Record<string, string> }
  [field: string]: unknown
}

interface Container {
  command: string[]
  ports: Array<{ name: string; containerPort: number }>
  readinessProbe: { httpGet: unknown }
  livenessProbe: { httpGet: unknown }
  envFrom: unknown[]
  lifecycle: { preStop: { exec: { command: string[] } } }
}
interface Deployment extends K8sObject {
  spec: {
    replicas: number
    template: {
      metadata: { labels: Record<string, string> }
      spec: { containers: Container[]; terminationGracePeriodSeconds?: number }
    }
  }
}
interface Service extends K8sObject {
  spec: { selector: Record<string, string> }
}
interface DisruptionBudget extends K8sObject {
  spec: { minAvailable: number; selector: { matchLabels: Record<string, string> } }
}

function manifests(): K8sObject[] {
  return readdirSync(join(deploy, 'k8s'))
    .filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml')
    .flatMap((file) => parseAllDocuments(read('k8s', file)).map((doc) => doc.toJS() as K8sObject))
}

function find<T extends K8sObject>(kind: string): T {
  const found = manifests().find((m) => m.kind === kind)
  if (found === undefined) throw new Error(`no ${kind} in deploy/k8s`)
  return found as T
}

describe('deployment files', () => {
  it('every YAML file parses without errors', () => {
    const files = [
      ...readdirSync(deploy).filter((f) => f.endsWith('.yaml')),
      ...readdirSync(join(deploy, 'k8s')).map((f) => join('k8s', f)),
    ]
    expect(files.length).toBeGreaterThanOrEqual(6)
    for (const file of files) {
      for (const doc of parseAllDocuments(read(file))) expect(doc.errors, file).toEqual([])
    }
  })

  it("the image built by default checks /healthz and starts the deployed package's entry", () => {
    // images.test.ts checks every stage (Node 24, user, ownership, dependency caching) and runs the package.
    const image = parseDockerfile(read('aggregator.Dockerfile')).at(-1)
    const instruction = (keyword: string) => image?.instructions.find((i) => i.keyword === keyword)
    expect(instruction('HEALTHCHECK')?.args).toMatch(/\/healthz/)
    expect(execForm(instruction('CMD'))).toEqual(IMAGE_COMMAND)
  })

  it('the Deployment probes /readyz and /healthz on the port the aggregator listens on, and runs the same command', () => {
    const deployment = find<Deployment>('Deployment')
    const container = deployment.spec.template.spec.containers[0] as Container
    expect(container.command).toEqual(IMAGE_COMMAND)
    const port = container.ports.find((p) => p.name === 'http')
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' })
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' })
    const configMap = find<K8sObject & { data: Record<string, string> }>('ConfigMap')
    expect(Number(configMap.data.PORT)).toBe(port?.containerPort)
    expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2)
  })

  it('the ConfigMap and Secret the Deployment reads form a valid aggregator configuration', () => {
    const deployment = find<Deployment>('Deployment')
    const container = deployment.spec.template.spec.containers[0] as Container
    const configMap = find<K8sObject & { data: Record<string, string> }>('ConfigMap')
    const secret = find<K8sObject & { stringData: Record<string, string> }>('Secret')
    expect(container.envFrom).toEqual([
      { configMapRef: { name: configMap.metadata.name } },
      { secretRef: { name: secret.metadata.name } },
    ])
    const config = loadConfig({ ...configMap.data, ...secret.stringData, HEATSINK_REPLICA_ID: 'pod-0' })
    // With the token set it listens on every interface, so the probes can reach it.
    expect(config.host).toBe('0.0.0.0')
    expect(config.databaseUrl).not.toBeNull()
    // After the preStop sleep the replica exits by its own deadline, before Kubernetes' SIGKILL (the grace period
    // counts from the start of preStop; 30 s when the field is absent).
    const graceSeconds = deployment.spec.template.spec.terminationGracePeriodSeconds ?? 30
    const [, preStopSeconds] = container.lifecycle.preStop.exec.command
    expect(
      Number(preStopSeconds) + config.shutdownTimeoutMs / 1000 + KILL_MARGIN_SECONDS,
    ).toBeLessThanOrEqual(graceSeconds)
  })

  it("the Service and PodDisruptionBudget select the Deployment's pods", () => {
    const deployment = find<Deployment>('Deployment')
    const podLabels = deployment.spec.template.metadata.labels
    const service = find<Service>('Service')
    const pdb = find<DisruptionBudget>('PodDisruptionBudget')
    expect(podLabels).toMatchObject(service.spec.selector)
    expect(podLabels).toMatchObject(pdb.spec.selector.matchLabels)
    expect(pdb.spec.minAvailable).toBeGreaterThanOrEqual(1)
  })

  it('the compose file runs Redis, Postgres, two aggregator replicas with valid configurations, and the demo agent', () => {
    interface ComposeService {
      command?: string[]
      environment?: Record<string, string>
      build?: { context: string; dockerfile: string; target: string }
    }
    const compose = parse(read('compose.yaml'), { merge: true }) as {
      services: Record<string, ComposeService>
    }
    const services = compose.services
    expect(Object.keys(services).sort()).toEqual([
      'aggregator-1',
      'aggregator-2',
      'demo-agent',
      'postgres',
      'redis',
    ])
    const replicaIds = new Set<string>()
    for (const name of ['aggregator-1', 'aggregator-2']) {
      const service = services[name] as ComposeService
      expect(service.build).toEqual({
        context: '..',
        dockerfile: 'deploy/aggregator.Dockerfile',
        target: 'aggregator',
      })
      const config = loadConfig({ ...service.environment, HEATSINK_API_TOKEN: 'token' })
      expect(config.databaseUrl).toMatch(/^postgres:\/\/.*@postgres:5432\//)
      expect(config.host).toBe('0.0.0.0')
      replicaIds.add(config.replicaId)
    }
    expect(replicaIds.size).toBe(2)
    // The demo agent is the Dockerfile's demo-agent stage: the deployed quickstart package's traffic agent.
    const demo = services['demo-agent'] as ComposeService
    expect(demo.build).toEqual({
      context: '..',
      dockerfile: 'deploy/aggregator.Dockerfile',
      target: 'demo-agent',
    })
    expect(demo.command).toEqual(['node', 'dist/traffic-agent.js'])
    expect(existsSync(join(REPO_ROOT, 'services/quickstart/src/traffic-agent.ts'))).toBe(true)
  })

  it('the Sentinel compose file gives every component one redis+sentinel:// URL naming its three sentinels', () => {
    interface ComposeService {
      command?: string[]
      environment?: Record<string, string>
      depends_on?: Record<string, unknown>
    }
    const compose = parse(read('compose.sentinel.yaml'), { merge: true }) as {
      services: Record<string, ComposeService>
    }
    const services = compose.services
    const sentinels = Object.keys(services).filter((name) => name.startsWith('sentinel-'))
    expect(sentinels).toEqual(['sentinel-1', 'sentinel-2', 'sentinel-3'])
    for (const name of sentinels) {
      // Each monitors the primary service by name, with a quorum of 2 of the 3.
      expect(services[name]?.command?.join(' ')).toContain('sentinel monitor mymaster redis-primary 6379 2')
    }
    expect(services['redis-replica']?.command).toEqual(
      expect.arrayContaining(['--replicaof', 'redis-primary']),
    )
    const urls = new Set<string>()
    for (const name of ['aggregator-1', 'aggregator-2']) {
      const service = services[name] as ComposeService
      // The password comes from the environment compose runs in (a Secret in Kubernetes), never from the file.
      expect(service.environment?.HEATSINK_SENTINEL_PASSWORD).toMatch(/^\$\{HEATSINK_SENTINEL_PASSWORD:-\}$/)
      const config = loadConfig({
        ...service.environment,
        HEATSINK_API_TOKEN: 'token',
        HEATSINK_SENTINEL_PASSWORD: 'from-the-environment',
      })
      expect(config.sentinelPassword).toBe('from-the-environment')
      urls.add(config.redisUrl)
    }
    urls.add(services['demo-agent']?.environment?.REDIS_URL as string)
    expect([...urls]).toEqual([
      'redis+sentinel://sentinel-1:26379,sentinel-2:26379,sentinel-3:26379/mymaster',
    ])
  })
})
