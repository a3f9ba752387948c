import { execFile } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { ensureDebianPackage } from '@heatsink/devservices'
import { REPO_ROOT } from '@heatsink/test'
import { beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'

const RULES_DIR = join(REPO_ROOT, 'deploy', 'prometheus')
const RULES = join(RULES_DIR, 'heatsink-rules.yaml')
const RULE_TESTS = join(RULES_DIR, 'heatsink-rules.test.yaml')
const MANIFEST = join(REPO_ROOT, 'deploy', 'k8s', 'prometheusrule.example.yaml')
const OPERATIONS = join(REPO_ROOT, 'docs', 'operations.md')
const RUNBOOKS = 'https://github.com/heatsink/heatsink/blob/main/docs/operations.md#'
// The per-node view's series, exported by the node sampler (built on its own branch); every other heatsink_ series
// a rule uses must be one the services' sources name.
const NODE_VIEW_SERIES = ['heatsink_node_ops_per_second', 'heatsink_node_imbalance', 'heatsink_node_up']

interface Rule {
  alert: string
  expr: string
  annotations: Record<string, string>
}
interface RuleFile {
  groups: Array<{ name: string; rules: Rule[] }>
}
interface RuleTests {
  tests: Array<{ alert_rule_test: Array<{ alertname: string; exp_alerts: unknown[] }> }>
}

function run(file: string, args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd: RULES_DIR }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : Number(error.code ?? 1), output: stdout + stderr })
    })
  })
}

// GitHub's anchor for a heading: lower case, punctuation but hyphens and underscores dropped, spaces to hyphens.
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-')
}

// Every file name under `dir` ending in .ts, recursively.
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  )
}

describe('the alert rules an operator loads (deploy/prometheus)', () => {
  let promtool: string
  const rules = parse(readFileSync(RULES, 'utf8')) as RuleFile
  const alerts = rules.groups.flatMap((group) => group.rules)

  beforeAll(() => {
    // Debian's prometheus package carries promtool; installed once when missing (CI runs as root).
    promtool = ensureDebianPackage('/usr/bin/promtool', 'prometheus')
  }, 600_000)

  it('passes promtool check rules', async () => {
    const { code, output } = await run(promtool, ['check', 'rules', RULES])
    expect(output).toContain(`SUCCESS: ${alerts.length} rules found`)
    expect(code).toBe(0)
  })

  it('passes promtool test rules, whose tests see every alert fire and stay quiet', async () => {
    const { code, output } = await run(promtool, ['test', 'rules', RULE_TESTS])
    expect(output).toContain('SUCCESS')
    expect(code).toBe(0)
    const cases = (parse(readFileSync(RULE_TESTS, 'utf8')) as RuleTests).tests.flatMap(
      (test) => test.alert_rule_test,
    )
    for (const { alert } of alerts) {
      const mine = cases.filter((c) => c.alertname === alert)
      expect(
        mine.some((c) => c.exp_alerts.length > 0),
        `${alert} firing`,
      ).toBe(true)
      expect(
        mine.some((c) => c.exp_alerts.length === 0),
        `${alert} not firing`,
      ).toBe(true)
    }
  })

  it('covers what the operators asked for, each alert with a runbook in docs/operations.md', () => {
    expect(alerts.map((rule) => rule.alert)).toEqual(
      expect.arrayContaining([
        'HeatsinkHotKeyUnmitigated',
        'HeatsinkNodeImbalance',
        'HeatsinkMissStorm',
        'HeatsinkAgentsNotReporting',
        'HeatsinkIngestLagging',
        'HeatsinkRegistryWritesFailing',
        'HeatsinkProxyRedisUnreachable',
      ]),
    )
    const headings = new Set(
      readFileSync(OPERATIONS, 'utf8')
        .split('\n')
        .filter((line) => /^#{2,4} /.test(line))
        .map((line) => anchor(line.replace(/^#+ /, ''))),
    )
    for (const { alert, annotations } of alerts) {
      expect(annotations.runbook_url, alert).toBe(`${RUNBOOKS}${alert.toLowerCase()}`)
      expect(headings.has(alert.toLowerCase()), `docs/operations.md has a section "${alert}"`).toBe(true)
    }
  })

  it('uses only series Heatsink exports', () => {
    const exported = sources(join(REPO_ROOT, 'services'))
      .filter((file) => file.includes(`${join('src', '')}`))
      .map((file) => readFileSync(file, 'utf8'))
      .join('\n')
    for (const { alert, expr } of alerts) {
      for (const [name] of expr.matchAll(/heatsink_[a-z_]+/g)) {
        const series = name.replace(/_bucket$/, '')
        if (NODE_VIEW_SERIES.includes(series)) continue
        expect(exported, `${alert} uses ${series}`).toContain(`'${series}'`)
      }
    }
  })

  it('the PrometheusRule manifest in deploy/k8s is generated from the same file', async () => {
    const script = pathToFileURL(join(REPO_ROOT, 'scripts', 'prometheus-rule.mjs')).href
    const { prometheusRule } = (await import(script)) as { prometheusRule: (rules: string) => string }
    const manifest = readFileSync(MANIFEST, 'utf8')
    expect(manifest, 'run node scripts/prometheus-rule.mjs').toBe(prometheusRule(readFileSync(RULES, 'utf8')))
    const parsed = parse(manifest) as { kind: string; spec: RuleFile }
    expect(parsed.kind).toBe('PrometheusRule')
    expect(parsed.spec).toEqual(rules)
  })
})
