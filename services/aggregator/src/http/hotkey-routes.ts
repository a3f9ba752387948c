import type { RegistryEntry } from '@heatsink/protocol'
import type { FastifyBaseLogger } from 'fastify'
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import { z } from 'zod'
import type { KeyContention } from '../contention/write-contention.js'
import type { RegistryService } from '../registry/registry-service.js'
import type { TrafficReader } from '../traffic-reader.js'
import { bearerAuth } from './bearer-auth.js'
import { PUBLIC, WRITE_SECURITY } from './openapi.js'
import { replyError } from './reply-error.js'
import {
  answers,
  errorAnswer,
  HotKey,
  HotKeyList,
  KeyParams,
  KeyStatsResponse,
  PromoteBody,
} from './schemas.js'

/** What the /hotkeys routes need. */
export interface HotkeyRoutesOptions {
  readonly registry: RegistryService
  readonly traffic: TrafficReader
  /** When set, POST and DELETE need `Authorization: Bearer <token>`. */
  readonly apiToken: string | null
  /** Transactions aborted by WATCH per key; without it the stats say none. */
  readonly contention?: { of(key: string): Promise<KeyContention> }
}

const NO_CONTENTION: KeyContention = { watchAbortsPerSecond: 0, contended: false }

const ACTOR = 'api'
const tags = ['hotkeys']

/** GET /hotkeys, POST /hotkeys/{key}/promote, DELETE /hotkeys/{key}, GET /hotkeys/{key}/stats. */
export const hotkeyRoutes: FastifyPluginAsyncZod<HotkeyRoutesOptions> = async (app, options) => {
  const { registry, traffic } = options
  const guarded = options.apiToken === null ? {} : { onRequest: bearerAuth(options.apiToken) }

  // Live rates come from Redis; a failure there should not hide the registry, so it reads as unknown.
  const rateOf = (key: string, log: FastifyBaseLogger) =>
    traffic.requestsPerSecond(key).catch((error: unknown) => {
      log.warn({ err: error, key }, 'reading the live rate failed')
      return null
    })
  const present = async (entry: RegistryEntry, log: FastifyBaseLogger): Promise<HotKey> =>
    toHotKey(entry, await rateOf(entry.key, log))

  app.get(
    '/hotkeys',
    {
      schema: {
        tags,
        operationId: 'listHotKeys',
        summary: 'Active hot keys',
        security: PUBLIC,
        response: { 200: HotKeyList, 503: answers.registryUnavailable },
      },
    },
    async (request) => ({
      hotkeys: await Promise.all((await registry.list()).map((entry) => present(entry, request.log))),
    }),
  )

  app.post(
    '/hotkeys/:key/promote',
    {
      ...guarded,
      schema: {
        tags,
        operationId: 'promoteHotKey',
        summary: 'Promote a key, or change an active promotion',
        description:
          'Absent fields take their defaults (splitFactor 1, no expiry). 201 when the key was not active; 200 otherwise.',
        params: KeyParams,
        body: PromoteBody,
        security: WRITE_SECURITY,
        response: {
          200: HotKey.describe('The key was active already: its entry, changed or not'),
          201: HotKey.describe('The key was not active: its new entry'),
          400: answers.invalid,
          401: answers.unauthorized,
          409: errorAnswer(
            "Another key with the same key hash (first 16 hex characters of SHA-256) is in the registry; the key's entry is unchanged",
          ),
          503: answers.registryUnavailable,
        },
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
        // The change is logged on the request's logger, so its line carries the request id.
        log: request.log,
      })
      return reply.code(result.created ? 201 : 200).send(await present(result.entry, request.log))
    },
  )

  app.delete(
    '/hotkeys/:key',
    {
      ...guarded,
      schema: {
        tags,
        operationId: 'demoteHotKey',
        summary: 'Demote a key',
        params: KeyParams,
        security: WRITE_SECURITY,
        response: {
          204: z.null().describe('Demoted'),
          400: answers.invalid,
          401: answers.unauthorized,
          404: errorAnswer('The key is not active in the registry'),
          503: answers.registryUnavailable,
        },
      },
    },
    async (request, reply) => {
      const { key } = request.params
      const demoted = await registry.demote(key, {
        actor: ACTOR,
        reason: 'demoted through the API',
        log: request.log,
      })
      if (!demoted) return replyError(reply, 404, `key ${JSON.stringify(key)} is not in the registry`)
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/hotkeys/:key/stats',
    {
      schema: {
        tags,
        operationId: 'getHotKeyStats',
        summary: "A key's live traffic and how its mitigation performs",
        params: KeyParams,
        security: PUBLIC,
        response: {
          200: KeyStatsResponse,
          400: answers.invalid,
          404: errorAnswer(
            'The control plane has never seen the key: no traffic reported and never in the registry',
          ),
          503: answers.registryUnavailable,
        },
      },
    },
    async (request, reply) => {
      const { key } = request.params
      const [stats, contention] = await Promise.all([
        traffic.keyStats(key),
        options.contention?.of(key) ?? NO_CONTENTION,
      ])
      if (stats === undefined && contention.watchAbortsPerSecond === 0 && !(await registry.known(key))) {
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
        commandForms: stats?.commandForms ?? [],
        splitKind: stats?.splitKind ?? null,
        watchAbortsPerSecond: contention.watchAbortsPerSecond,
        contended: contention.contended,
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
