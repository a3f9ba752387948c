import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { REPO_ROOT } from '@heatsink/test'
import { describe, expect, it } from 'vitest'
import { parse, parseAllDocuments } from 'yaml'

// What both Kubernetes deployments (deploy/k8s, deploy/k8s-proxy) owe a production cluster: admission under the
// restricted Pod Security Standard, a startup probe, a preStop delay, a Prometheus scrape configuration, and no
// placeholder secret applied by `kubectl apply -k`. Each service's own deploy-files test checks its configuration
// and that the grace period covers the preStop delay plus its shutdown deadline.

interface Manifest {
  kind: string
  metadata: { name: string }
  // biome-ignore lint/suspicious/noExplicitAny: manifests are checked field by field below
  spec?: any
}

const EXAMPLE = /\.example\.yaml$/

function load(dir: string) {
  const read = (file: string) => readFileSync(join(REPO_ROOT, 'deploy', dir, file), 'utf8')
  const files = readdirSync(join(REPO_ROOT, 'deploy', dir)).filter((file) => file.endsWith('.yaml'))
  const manifests = files
    .filter((file) => file !== 'kustomization.yaml')
    .flatMap((file) =>
      parseAllDocuments(read(file)).map((doc) => ({ file, manifest: doc.toJS() as Manifest })),
    )
  const kustomization = parse(read('kustomization.yaml')) as { resources: string[] }
  const only = (kind: string) => {
    const found = manifests.filter((entry) => entry.manifest.kind === kind)
    expect(found, `one ${kind} in deploy/${dir}`).toHaveLength(1)
    return found[0] as { file: string; manifest: Manifest }
  }
  const deployment = only('Deployment').manifest
  return {
    files,
    kustomization,
    only,
    pod: deployment.spec.template,
    container: deployment.spec.template.spec.containers[0],
  }
}

describe.each(['k8s', 'k8s-proxy'])('deploy/%s', (dir) => {
  it('meets the restricted Pod Security Standard, with a read-only root filesystem', () => {
    const { pod, container } = load(dir)
    // The image's user is `node` by name: runAsNonRoot can only verify a numeric uid.
    expect(pod.spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: expect.any(Number),
      seccompProfile: { type: 'RuntimeDefault' },
    })
    expect(pod.spec.securityContext.runAsUser).toBeGreaterThan(0)
    expect(container.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    })
  })

  it('has a startup probe that gives the process a minute, and sleeps in preStop before SIGTERM', () => {
    const { container } = load(dir)
    const startup = container.startupProbe
    expect(startup.httpGet ?? startup.tcpSocket).toBeDefined()
    expect(startup.periodSeconds * startup.failureThreshold).toBeGreaterThanOrEqual(60)
    // exec, not the `sleep` action: that one needs Kubernetes 1.30; the image (node:24-bookworm-slim) has sleep.
    const [sleep, seconds] = container.lifecycle.preStop.exec.command
    expect(sleep).toBe('sleep')
    expect(Number(seconds)).toBeGreaterThan(0)
  })

  it('is scraped by Prometheus: pod annotations, and a PodMonitor example that kustomize does not apply', () => {
    const { pod, container, only, kustomization } = load(dir)
    const annotations = pod.metadata.annotations
    expect(annotations['prometheus.io/scrape']).toBe('true')
    expect(annotations['prometheus.io/path']).toBe('/metrics')
    const metricsPort = container.ports.find(
      (port: { containerPort: number }) => String(port.containerPort) === annotations['prometheus.io/port'],
    )
    expect(metricsPort, 'prometheus.io/port is a container port').toBeDefined()
    const podMonitor = only('PodMonitor')
    expect(podMonitor.file).toMatch(EXAMPLE)
    expect(kustomization.resources).not.toContain(podMonitor.file)
    expect(pod.metadata.labels).toMatchObject(podMonitor.manifest.spec.selector.matchLabels)
    expect(podMonitor.manifest.spec.podMetricsEndpoints).toEqual([
      expect.objectContaining({ port: metricsPort.name, path: '/metrics' }),
    ])
  })

  it("applies every file but the examples, and the Deployment's Secret only as an example", () => {
    const { files, kustomization, only, container } = load(dir)
    expect([...kustomization.resources].sort()).toEqual(
      files.filter((file) => file !== 'kustomization.yaml' && !EXAMPLE.test(file)).sort(),
    )
    const secret = only('Secret')
    expect(secret.file).toBe('secret.example.yaml')
    expect(container.envFrom).toContainEqual({ secretRef: { name: secret.manifest.metadata.name } })
  })
})
