import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import { createJsonSchemaTransform, createJsonSchemaTransformObject } from 'fastify-type-provider-zod'
import { AGGREGATOR_VERSION } from '../metrics.js'

/** The security requirement of the write operations (POST and DELETE). */
export const WRITE_SECURITY = [{ bearerAuth: [] }]
/** The security requirement of the read operations: none, stated so that no operation leaves it unsaid. */
export const PUBLIC = []

// Schemas given an id (`.meta({ id })`, zod's global registry, which also holds every `.describe()`) are shown once
// under `components.schemas` and referenced by name: the error shape every route shares.
const transformObject = createJsonSchemaTransformObject({})

/** The OpenAPI document's fixed parts; the operations come from the routes' schemas. */
export const openApiOptions: FastifyDynamicSwaggerOptions = {
  openapi: {
    openapi: '3.0.3',
    info: {
      title: 'Heatsink control plane',
      description:
        'The HotKeyRegistry: list, promote and demote hot keys, and read their live statistics. ' +
        'Keys are raw Redis keys, percent-encoded in the path.',
      version: AGGREGATOR_VERSION,
      license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
    },
    // Relative to this document: right for whatever host, port and scheme the aggregator is reached on.
    servers: [{ url: '/', description: 'The aggregator serving this document' }],
    tags: [
      { name: 'hotkeys', description: 'The HotKeyRegistry: what is mitigated, and how' },
      {
        name: 'operators',
        description: 'What the dashboard and the heatsink CLI show: agents, changes, live rates',
      },
      { name: 'operations', description: 'Probes for the orchestrator and metrics for Prometheus' },
    ],
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'The value of HEATSINK_API_TOKEN, as `Authorization: Bearer <token>`. Required on POST and DELETE when ' +
            'the aggregator is started with HEATSINK_API_TOKEN (a missing or wrong token is a 401). An aggregator ' +
            'started without it listens on 127.0.0.1 only and takes writes without a token.',
        },
      },
    },
  },
  transform: createJsonSchemaTransform({ skipList: [] }),
  transformObject: (document) => {
    const transformed = transformObject(document)
    // The provider adds an input variant (`ErrorInput`) of every named schema. The error shape is only ever an
    // answer, so that variant is referenced by no operation: dropped, as an unused component would be reported.
    const { components, paths } = transformed as {
      components?: { schemas?: Record<string, unknown> }
      paths?: unknown
    }
    const referenced = JSON.stringify(paths ?? {})
    for (const id of Object.keys(components?.schemas ?? {})) {
      const unused = !referenced.includes(`"#/components/schemas/${id}"`)
      if (id.endsWith('Input') && unused) delete components?.schemas?.[id]
    }
    return transformed
  },
}
