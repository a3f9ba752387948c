import { Mitigation, RegistrySource } from '@heatsink/protocol'
import { z } from 'zod'
import { MAX_EVENTS } from '../registry/event-log.js'

// Schemas of the read-only routes operators' tools use (dashboard, CLI): agents, the event log, per-agent stats.
// They validate queries and are the OpenAPI document, like schemas.ts.

/** One agent as GET /agents lists it. */
export const AgentStatusSchema = z.object({
  agentId: z.string(),
  lastReportAt: z.int().describe('When a replica last took in a report of the agent, epoch ms'),
  lastReportAgeMs: z.int().min(0),
  reportsDropped: z.int().min(0).describe('Reports the agent said it could not send, summed'),
  registryVersion: z.int().min(0).nullable().describe('Registry version the agent held at its last report'),
  stale: z.boolean().describe('No report for three windows'),
  sketchError: z
    .object({
      sampled: z.int().min(0),
      meanRelativeError: z.number().min(0),
      maxRelativeError: z.number().min(0),
      overBound: z.int().min(0),
    })
    .nullable()
    .describe(
      "The agent's sketch error in its latest measured window (sampled keys, estimate against exact)",
    ),
})

/** Body of GET /agents. */
export const AgentList = z.object({ agents: z.array(AgentStatusSchema) })

/** Query of GET /events. */
export const EventsQuery = z.strictObject(
  {
    after: z.coerce
      .number({ error: 'must be a registry version' })
      .int('must be a registry version')
      .min(0, 'must be a registry version')
      .optional()
      .describe('Only events above this registry version (follow the log by passing the last one seen)'),
    key: z.string().min(1, 'must not be empty').optional().describe("Only this key's events"),
    stormsAfter: z
      .string()
      .regex(/^\d+-\d+$/, 'must be a miss storm id (<ms>-<seq>)')
      .optional()
      .describe(
        'Only miss storms after this id (follow them by passing the last one seen). Without it, storms are listed ' +
          'only when `after` is absent or 0, so a follower that knows nothing of storms is not sent them again',
      ),
    limit: z.coerce
      .number({ error: `must be an integer from 1 to ${MAX_EVENTS}` })
      .int(`must be an integer from 1 to ${MAX_EVENTS}`)
      .min(1, `must be an integer from 1 to ${MAX_EVENTS}`)
      .max(MAX_EVENTS, `must be an integer from 1 to ${MAX_EVENTS}`)
      .optional()
      .describe('Default 50'),
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys' ? `has unknown parameter(s) ${issue.keys.join(', ')}` : 'is invalid',
  },
)

/** One registry change. */
export const RegistryChangeSchema = z.object({
  version: z.int().min(1),
  key: z.string(),
  type: z.enum(['promote', 'update', 'demote']),
  source: RegistrySource,
  actor: z.string().describe('`api` for the REST API, a replica id for automatic changes'),
  reason: z.string(),
  mitigation: Mitigation,
  splitFactor: z.int().min(1),
  ttlSeconds: z.int().nullable(),
  requestsPerSecond: z.number().nullable(),
  at: z.int().describe('Epoch ms of the registry write'),
  onsetToMitigationMs: z
    .number()
    .nullable()
    .describe('From the reports first showing the key hot to the write'),
})

/** One miss storm (see MissStorm in @heatsink/protocol). */
export const MissStormSchema = z.object({
  id: z.string().describe('Increasing; pass the last one seen as `stormsAfter` to follow'),
  type: z.literal('miss_storm'),
  key: z.string(),
  node: z
    .string()
    .nullable()
    .describe("host:port of the Redis owning the key (a Cluster: its slot's master)"),
  missesPerSecond: z.number().describe('Cluster-wide misses per second in the window that raised it'),
  baselinePerSecond: z.number().describe('Mean misses per second over the windows before'),
  action: z
    .enum(['coalesce_applied', 'already_mitigated', 'promotion_failed'])
    .describe('What Heatsink did: coalesce applied to a key not yet mitigated, or nothing'),
  mitigation: Mitigation.nullable().describe("The key's mitigation after the action"),
  at: z.int().describe('Epoch ms when it was raised'),
})

/** Body of GET /events. */
export const EventList = z.object({
  events: z.array(RegistryChangeSchema).describe('Newest first'),
  missStorms: z.array(MissStormSchema).describe('Newest first; the same query filters them'),
})

/** One agent's latest window of statistics for a key. */
export const AgentKeyStats = z.object({
  agentId: z.string(),
  windowStart: z.int(),
  l1Hits: z.int(),
  l1Misses: z.int(),
  misses: z.int(),
  coalescedWaiters: z.int(),
  upstreamLoads: z.int(),
  staleServes: z.int(),
  timeouts: z.int(),
  splitShardCounts: z.array(z.int()),
})

/** Body of GET /hotkeys/{key}/agents. */
export const KeyAgentsResponse = z.object({ key: z.string(), agents: z.array(AgentKeyStats) })
