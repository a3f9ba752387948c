import type { RegistryEntry } from '@heatsink/protocol'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { RegistryService } from '../registry/registry-service.js'
import type { TrafficReader } from '../traffic-reader.js'
import { bearerAuth } from './bearer-auth.js'
import { replyError } from './reply-error.js'
import { ErrorResponse, HotKey, HotKeyList, KeyParams, KeyStatsResponse, PromoteBody } from './schemas.js'

/** What the /hotkeys routes need. */
export interface HotkeyRoutesOptions {
  readonly registry: RegistryService
  readonly traffic: TrafficReader
  /** When set, POST and DELETE need `Authorization: Bearer <token>`. */
  readonly apiToken: string | null
}

const ACTOR = 'api'
const tags = ['hotkeys']

/** GET /hotkeys, POST /hotkeys/{key}/promote, DELETE /hotkeys/{key}, GET /hotkeys/{key}/stats. */
export const hotkeyRoutes: FastifyPluginAsyncZod<HotkeyRoutesOptions> = async (app, options) => {
  const { registry, traffic } = options
  const guarded = options.apiToken === null ? {} : { onRequest: bearerAuth(options.apiToken) }
  const security = options.apiToken === null ? {} : { security: [{ bearerAuth: [] }] }

  // Live rates come from Redis; a failure there should not hide the registry, so it reads as unknown.
  const rateOf = (key: string) =>
    traffic.requestsPerSecond(key).catch((error: unknown) => {
      app.log.warn({ err: error, key }, 'reading the live rate failed')
      return null
    })
  const present = async (entry: RegistryEntry): Promise<HotKey> => toHotKey(entry, await rateOf(entry.key))

  app.get(
    '/hotkeys',
    {
      schema: {
        tags,
        summary: 'Active hot keys',
        response: { 200: HotKeyList, 503: ErrorResponse },
      },
    },
    async () => ({ hotkeys: await Promise.all((await registry.list()).map(present)) }),
  )

  app.post(
    '/hotkeys/:key/promote',
    {
      ...guarded,
      schema: {
        tags,
        summary: 'Promote a key, or change an active promotion',
        description:
          'Absent fields take their defaults (splitFactor 1, no expiry). 201 when the key was not active; 200 otherwise.',
        params: KeyParams,
        body: PromoteBody,
        ...security,
        response: { 200: HotKey, 201: HotKey, 400: ErrorResponse, 401: ErrorResponse, 503: ErrorResponse },
      },
    },
    async (request, reply) => {
      const { key } = request.params
      const { mitigation, splitFactor, ttlSeconds } = request.body
      const result = await registry.promote({
        key,
        mitigation,
        ...(splitFactor === undefined ? {} : { splitFactor }),
        ttlSeconds: ttlSeconds ?? null,
        source: 'manual',
        actor: ACTOR,
        reason: 'promoted through the API',
      })
      return reply.code(result.created ? 201 : 200).send(await present(result.entry))
    },
  )

  app.delete(
    '/hotkeys/:key',
    {
      ...guarded,
      schema: {
        tags,
        summary: 'Demote a key',
        params: KeyParams,
        ...security,
        response: {
          204: z.null().describe('Demoted'),
          400: ErrorResponse,
          401: ErrorResponse,
          404: ErrorResponse,
          503: ErrorResponse,
        },
      },
    },
    async (request, reply) => {
      const { key } = request.params
      const demoted = await registry.demote(key, { actor: ACTOR, reason: 'demoted through the API' })
      if (!demoted) return replyError(reply, 404, `key ${JSON.stringify(key)} is not in the registry`)
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/hotkeys/:key/stats',
    {
      schema: {
        tags,
        summary: "A key's live traffic and how its mitigation performs",
        params: KeyParams,
        response: { 200: KeyStatsResponse, 400: ErrorResponse, 404: ErrorResponse, 503: ErrorResponse },
      },
    },
    async (request, reply) => {
      const { key } = request.params
      const stats = await traffic.keyStats(key)
      if (stats === undefined && !(await registry.known(key))) {
        return replyError(reply, 404, `key ${JSON.stringify(key)} has never been seen by the control plane`)
      }
      return {
        key,
        requestsPerSecond: stats?.requestsPerSecond ?? null,
        hitRate: stats?.hitRate ?? null,
        localCacheHitRatio: stats?.localCacheHitRatio ?? null,
        coalesceCollapseRatio: stats?.coalesceCollapseRatio ?? null,
        splitShardCounts: stats?.splitShardCounts ?? [],
        agents: stats?.agents ?? 0,
        sketchError: stats?.sketchError ?? null,
      }
    },
  )
}

function toHotKey(entry: RegistryEntry, requestsPerSecond: number | null): HotKey {
  return {
    key: entry.key,
    keyHash: entry.keyHash,
    mitigation: entry.mitigation,
    splitFactor: entry.splitFactor,
    ttlSeconds: entry.ttlSeconds,
    status: entry.status,
    source: entry.source,
    detectedAt: new Date(entry.detectedAt).toISOString(),
    expiresAt: entry.expiresAt === null ? null : new Date(entry.expiresAt).toISOString(),
    requestsPerSecond,
    version: entry.version,
  }
}
