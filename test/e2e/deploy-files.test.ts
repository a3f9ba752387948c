import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '@heatsink/aggregator'
import { AGGREGATOR_COMMAND, REPO_ROOT } from '@heatsink/test'
import { describe, expect, it } from 'vitest'
import { parse, parseAllDocuments } from 'yaml'

const deploy = join(REPO_ROOT, 'deploy')
const read = (...path: string[]) => readFileSync(join(deploy, ...path), 'utf8')

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

  it('the Dockerfile is multi-stage, runs as a non-root user with a healthcheck, and starts the command the tests run', () => {
    const dockerfile = read('aggregator.Dockerfile')
    expect(dockerfile.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2)
    const user = dockerfile.match(/^USER (\S+)/m)?.[1]
    expect(user).toBeDefined()
    expect(['root', '0']).not.toContain(user)
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n?.*\/healthz/m)
    const cmd = dockerfile.match(/^CMD (\[.*\])$/m)?.[1]
    expect(JSON.parse(cmd ?? 'null')).toEqual([...AGGREGATOR_COMMAND])
  })

  it('the Deployment probes /readyz and /healthz on the port the aggregator listens on, and runs the same command', () => {
    const deployment = find<Deployment>('Deployment')
    const container = deployment.spec.template.spec.containers[0] as Container
    expect(container.command).toEqual([...AGGREGATOR_COMMAND])
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
    // The replica exits by its own deadline, before Kubernetes' SIGKILL (30 s when the field is absent).
    const graceSeconds = deployment.spec.template.spec.terminationGracePeriodSeconds ?? 30
    expect(config.shutdownTimeoutMs).toBeLessThan(graceSeconds * 1000)
  })

  it("the Service and PodDisruptionBudget select the Deployment's pods", () => {
    const deployment = find<Deployment>('Deployment')
    const podLabels = deployment.spec.template.metadata.labels
    const service = find<Service>('Service')
    const pdb = find<DisruptionBudget>('PodDisruptionBudget')
    expect(podLabels).toMatchObject(service.spec.selector)
    expect(podLabels).toMatchObject(pdb.spec.selector.matchLabels)
    expect(pdb.spec.minAvailable).toBeGreaterThanOrEqual(1)
    const kustomization = parseAllDocuments(read('k8s', 'kustomization.yaml'))[0]?.toJS() as {
      resources: string[]
    }
    expect(kustomization.resources.sort()).toEqual(
      readdirSync(join(deploy, 'k8s'))
        .filter((f) => f !== 'kustomization.yaml')
        .sort(),
    )
  })

  it('the compose file runs Redis, Postgres, two aggregator replicas with valid configurations, and the demo agent', () => {
    interface ComposeService {
      command?: string[]
      environment?: Record<string, string>
      build?: { context: string; dockerfile: string }
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
      expect(service.build).toEqual({ context: '..', dockerfile: 'deploy/aggregator.Dockerfile' })
      const config = loadConfig({ ...service.environment, HEATSINK_API_TOKEN: 'token' })
      expect(config.databaseUrl).toMatch(/^postgres:\/\/.*@postgres:5432\//)
      expect(config.host).toBe('0.0.0.0')
      replicaIds.add(config.replicaId)
    }
    expect(replicaIds.size).toBe(2)
    // The demo agent runs an entry the image builds: the quickstart's traffic agent.
    const [node, entry] = services['demo-agent']?.command ?? []
    expect(node).toBe('node')
    expect(entry).toBe('services/quickstart/dist/traffic-agent.js')
    expect(existsSync(join(REPO_ROOT, 'services/quickstart/src/traffic-agent.ts'))).toBe(true)
  })
})
