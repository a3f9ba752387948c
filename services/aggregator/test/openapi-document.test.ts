import SwaggerParser from '@apidevtools/swagger-parser'
import { useTestPostgres, useTestRedis } from '@heatsink/test'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Aggregator, createAggregator } from '../src/aggregator.js'
import { testConfig } from './support/fixtures.js'

const redis = useTestRedis({ scope: 'all' })
const postgres = useTestPostgres({ scope: 'all' })

// Where the document is linted from; redocly keys its ignore list by the document's address.
const DOCUMENT_REF = '/heatsink/openapi.json'

// Operations that take no parameter and no body, so no request to them can be a client error: a 4xx documented
// there would be invented. redocly's operation-4xx-response is switched off for exactly these, and the test checks
// that each exception is still needed.
const NO_CLIENT_ERROR = ['/hotkeys', '/agents', '/live', '/nodes', '/healthz', '/readyz', '/metrics'].map(
  (path) => `#/paths/${path.replaceAll('/', '~1')}/get/responses`,
)

interface Operation {
  operationId?: string
  security?: Array<Record<string, string[]>>
  responses: Record<string, { content?: Record<string, unknown>; description: string }>
}
interface OpenApiDocument {
  servers?: Array<{ url: string }>
  paths: Record<string, Record<string, Operation>>
  components: {
    securitySchemes: Record<string, { type: string; scheme: string }>
    schemas: Record<string, unknown>
  }
}

describe('the OpenAPI document at /docs/json', () => {
  let aggregator: Aggregator
  let document: OpenApiDocument
  const operations = () =>
    Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ path, method, operation })),
    )

  beforeAll(async () => {
    aggregator = createAggregator(
      testConfig({
        DATABASE_URL: postgres().url,
        HEATSINK_NAMESPACE: redis().namespace,
        HEATSINK_API_TOKEN: 'openapi-test-token',
      }),
    )
    await aggregator.start()
    const response = await fetch(`${aggregator.url()}/docs/json`)
    expect(response.status).toBe(200)
    document = (await response.json()) as OpenApiDocument
  })
  afterAll(() => aggregator.stop())

  it('validates with swagger-parser', async () => {
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined()
  })

  it("passes redocly's recommended rules with no error and no warning", async () => {
    const config = await createConfig(
      { extends: ['recommended'] },
      { ignore: { [DOCUMENT_REF]: { 'operation-4xx-response': new Set(NO_CLIENT_ERROR) } } },
    )
    const problems = await lintFromString({
      source: JSON.stringify(document),
      absoluteRef: DOCUMENT_REF,
      config,
    })
    const shown = problems
      .filter((problem) => problem.ignored !== true)
      .map(
        (problem) =>
          `${problem.severity} ${problem.ruleId} at ${problem.location[0]?.pointer}: ${problem.message}`,
      )
    expect(shown).toEqual([])
    const ignored = problems.filter((problem) => problem.ignored === true).map((p) => p.location[0]?.pointer)
    expect(ignored.sort()).toEqual([...NO_CLIENT_ERROR].sort())
  })

  it('names every operation, uniquely, and serves relative to itself', () => {
    const ids = operations().map(({ operation }) => operation.operationId)
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id))).toBe(true)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids).toEqual(
      expect.arrayContaining([
        'listHotKeys',
        'promoteHotKey',
        'demoteHotKey',
        'getHotKeyStats',
        'scrapeMetrics',
      ]),
    )
    expect(document.servers).toEqual([expect.objectContaining({ url: '/' })])
  })

  it('declares the bearer token on the writes and no security on the reads', () => {
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
    for (const { method, path, operation } of operations()) {
      const writes = method === 'post' || method === 'delete'
      expect([path, method, operation.security]).toEqual([path, method, writes ? [{ bearerAuth: [] }] : []])
      if (writes) expect(Object.keys(operation.responses)).toContain('401')
    }
  })

  it('documents the client errors each operation can answer, with the shared Error schema', () => {
    const codes = (path: string, method: string) =>
      Object.keys(document.paths[path]?.[method]?.responses ?? {}).filter((code) => code.startsWith('4'))
    expect(codes('/hotkeys/{key}/promote', 'post')).toEqual(['400', '401', '409'])
    expect(codes('/hotkeys/{key}', 'delete')).toEqual(['400', '401', '404'])
    expect(codes('/hotkeys/{key}/stats', 'get')).toEqual(['400', '404'])
    expect(codes('/events', 'get')).toEqual(['400'])
    const invalid = document.paths['/hotkeys/{key}/promote']?.post?.responses['400']
    expect(invalid?.description).toMatch(/names it/)
    expect(invalid?.content).toEqual({
      'application/json': { schema: { $ref: '#/components/schemas/Error' } },
    })
    expect(Object.keys(document.components.schemas)).toEqual(['Error'])
  })

  it('gives /metrics the content type Prometheus scrapes', async () => {
    const documented = Object.keys(document.paths['/metrics']?.get?.responses['200']?.content ?? {})
    const served = (await fetch(`${aggregator.url()}/metrics`)).headers.get('content-type')
    expect(documented).toEqual(['text/plain; version=0.0.4; charset=utf-8'])
    expect(served).toBe(documented[0])
  })
})
