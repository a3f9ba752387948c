import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod'
import type { AgentDirectory } from '../agents/agent-directory.js'
import type { EventLog } from '../registry/event-log.js'
import type { MissStormLog } from '../storms/miss-storm-log.js'
import type { KeyStatsStore } from '../traffic/key-stats-store.js'
import { AgentList, EventList, EventsQuery, KeyAgentsResponse } from './insight-schemas.js'
import { PUBLIC } from './openapi.js'
import { answers, KeyParams } from './schemas.js'

/** What the read-only operator routes need. */
export interface InsightRoutesOptions {
  readonly agents: AgentDirectory
  readonly events: EventLog
  readonly missStorms?: MissStormLog
  readonly keyStats: KeyStatsStore
}

const tags = ['operators']

/** GET /agents, GET /events, GET /hotkeys/{key}/agents: what the dashboard and the CLI show besides /hotkeys. */
export const insightRoutes: FastifyPluginAsyncZod<InsightRoutesOptions> = async (app, options) => {
  app.get(
    '/agents',
    {
      schema: {
        tags,
        operationId: 'listAgents',
        summary: 'Agents heard from in the last ten minutes',
        security: PUBLIC,
        response: { 200: AgentList },
      },
    },
    async () => ({ agents: await options.agents.list() }),
  )

  app.get(
    '/events',
    {
      schema: {
        tags,
        operationId: 'listRegistryEvents',
        summary: 'Registry changes (promotions, updates, demotions) and miss storms, newest first',
        querystring: EventsQuery,
        security: PUBLIC,
        response: { 200: EventList, 400: answers.invalid, 503: answers.registryUnavailable },
      },
    },
    async (request) => {
      const { after, key, limit, stormsAfter } = request.query
      const filters = { ...(key === undefined ? {} : { key }), ...(limit === undefined ? {} : { limit }) }
      // A follower that passes `after` but not `stormsAfter` predates storms: listing them again on every poll
      // would repeat them, so it gets none.
      const listStorms = stormsAfter !== undefined || after === undefined || after === 0
      const [events, missStorms] = await Promise.all([
        options.events.recent({ ...(after === undefined ? {} : { afterVersion: after }), ...filters }),
        listStorms && options.missStorms !== undefined
          ? options.missStorms.recent({
              ...(stormsAfter === undefined ? {} : { afterId: stormsAfter }),
              ...filters,
            })
          : [],
      ])
      return { events, missStorms }
    },
  )

  app.get(
    '/hotkeys/:key/agents',
    {
      schema: {
        tags,
        operationId: 'listHotKeyAgents',
        summary: "Each agent's latest window of statistics for the key",
        params: KeyParams,
        security: PUBLIC,
        response: { 200: KeyAgentsResponse, 400: answers.invalid },
      },
    },
    async (request) => {
      const { key } = request.params
      const stored = await options.keyStats.read(key)
      return {
        key,
        agents: stored
          .map((s) => ({
            agentId: s.agentId,
            windowStart: s.windowStart,
            l1Hits: s.l1Hits,
            l1Misses: s.l1Misses,
            misses: s.misses,
            coalescedWaiters: s.coalescedWaiters,
            upstreamLoads: s.upstreamLoads,
            staleServes: s.staleServes,
            timeouts: s.timeouts,
            splitShardCounts: s.splitShardCounts ?? [],
          }))
          .sort((a, b) => a.agentId.localeCompare(b.agentId)),
      }
    },
  )
}
