import type { NodeDetail, NodesView } from '@heatsink/protocol'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { NodeStore } from '../nodes/node-store.js'
import { NodeDetailSchema, NodeParams, NodesViewSchema } from './node-schemas.js'
import { PUBLIC } from './openapi.js'
import { replyError } from './reply-error.js'
import { answers, errorAnswer } from './schemas.js'

/** What the node routes read. */
export interface NodeRoutesOptions {
  readonly store: NodeStore
  /** How often nodes are sampled; 0: not at all (HEATSINK_NODE_SAMPLE_MS=0). */
  readonly intervalMs: number
}

const tags = ['operators']

/** GET /nodes and GET /nodes/{node}: the Redis nodes' load and the hot keys on each, from any replica. */
export const nodeRoutes: FastifyPluginAsyncZod<NodeRoutesOptions> = async (app, options) => {
  const latest = async (): Promise<NodesView> =>
    (await options.store.latest()) ?? {
      topology: null,
      sampledAt: null,
      intervalMs: options.intervalMs,
      imbalance: null,
      nodes: [],
    }

  app.get(
    '/nodes',
    {
      schema: {
        tags,
        operationId: 'listNodes',
        summary: 'Every Redis node: load in the latest sample (about once a second) and the hot keys it owns',
        security: PUBLIC,
        response: { 200: NodesViewSchema },
      },
    },
    latest,
  )

  app.get(
    '/nodes/:node',
    {
      schema: {
        tags,
        operationId: 'getNode',
        summary: 'One Redis node: its latest sample, hot keys and its last 300 samples of ops/s and CPU',
        params: NodeParams,
        security: PUBLIC,
        response: {
          200: NodeDetailSchema,
          400: answers.invalid,
          404: errorAnswer('No such node in the latest sample'),
        },
      },
    },
    async (request, reply) => {
      const { node } = request.params
      const view = await latest()
      const found = view.nodes.find((candidate) => candidate.node === node)
      if (found === undefined) {
        const known = view.nodes.map((candidate) => candidate.node).join(', ')
        const why =
          view.sampledAt === null
            ? 'no node sample is kept yet (sampling is off, or has not run)'
            : `the latest sample has ${view.nodes.length} node(s): ${known}`
        return replyError(reply, 404, `node ${JSON.stringify(node)} is unknown: ${why}`, 'E_UNKNOWN_NODE')
      }
      const detail: NodeDetail = { ...found, history: await options.store.history(node) }
      return detail
    },
  )
}
