import { FORM_NAMES } from '@heatsink/commands'
import { MAX_KEY_BYTES, MAX_SPLIT_FACTOR, Mitigation, RegistrySource } from '@heatsink/protocol'
import { z } from 'zod'

// These schemas validate requests and are the OpenAPI document, so each message completes "<field> ...":
// Fastify reports a failure as `body/splitFactor must be a power of two from 1 to 1024`.

// ttl_seconds is a Postgres integer.
const MAX_TTL_SECONDS = 2_147_483_647

const required = (message: string) => (issue: { input: unknown }) =>
  issue.input === undefined ? 'is required' : message

const splitFactorMessage = `must be a power of two from 1 to ${MAX_SPLIT_FACTOR}`
const ttlMessage = `must be a positive integer of at most ${MAX_TTL_SECONDS}`
const mitigationMessage = `must be one of ${Mitigation.options.join(', ')}`
const splitOnlyMessage = 'must be 1 unless mitigation is split'

/** The raw Redis key, percent-encoded in the path. */
export const KeyParams = z.object({
  key: z
    .string()
    .min(1, 'must not be empty')
    .refine((key) => Buffer.byteLength(key, 'utf8') <= MAX_KEY_BYTES, {
      message: `must be at most ${MAX_KEY_BYTES} bytes of UTF-8`,
    })
    .describe('The raw Redis key, percent-encoded (for example `user%2F42` for `user/42`)'),
})

/** Body of POST /hotkeys/{key}/promote. */
export const PromoteBody = z
  .strictObject(
    {
      mitigation: z
        .enum(Mitigation.options, { error: required(mitigationMessage) })
        .describe(
          'local_cache: agents cache the value in-process; split: spread over copies; coalesce: one load at a time; replica_read: reads spread over the primary’s replicas within maxReplicaLagMs',
        ),
      splitFactor: z
        .int({ error: splitFactorMessage })
        .min(1, splitFactorMessage)
        .max(MAX_SPLIT_FACTOR, splitFactorMessage)
        .refine((n) => (n & (n - 1)) === 0, splitFactorMessage)
        .optional()
        .describe('Copies a split key is spread over; default 1'),
      ttlSeconds: z
        .int({ error: ttlMessage })
        .min(1, ttlMessage)
        .max(MAX_TTL_SECONDS, ttlMessage)
        .optional()
        .describe('How long the promotion lasts; absent: until demoted. Sending it again renews it.'),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `has unknown field(s) ${issue.keys.join(', ')}`
          : 'must be a JSON object with a mitigation',
    },
  )
  .superRefine((body, ctx) => {
    // Only a split key has copies; storing a factor for another mitigation would show settings nothing applies.
    if (body.mitigation !== 'split' && body.splitFactor !== undefined && body.splitFactor !== 1) {
      ctx.addIssue({ code: 'custom', path: ['splitFactor'], message: splitOnlyMessage })
    }
  })

/** One registry entry as the API shows it. */
export const HotKey = z.object({
  key: z.string(),
  keyHash: z.string().describe('First 16 hex characters of SHA-256 of the key'),
  mitigation: Mitigation,
  splitFactor: z.int().min(1).max(MAX_SPLIT_FACTOR),
  ttlSeconds: z.int().min(1).nullable(),
  status: z.literal('active'),
  source: RegistrySource,
  detectedAt: z.iso.datetime(),
  expiresAt: z.iso.datetime().nullable(),
  requestsPerSecond: z
    .number()
    .nullable()
    .describe('Cluster-wide, latest complete window; null when unknown'),
  version: z.int().min(1).describe('Registry version at which the entry last changed'),
})
export type HotKey = z.infer<typeof HotKey>

/** Body of GET /hotkeys. */
export const HotKeyList = z.object({ hotkeys: z.array(HotKey) })

/** Body of GET /hotkeys/{key}/stats. */
export const KeyStatsResponse = z.object({
  key: z.string(),
  requestsPerSecond: z.number().nullable().describe('null when there is no recent traffic data'),
  hitRate: z.number().nullable(),
  localCacheHitRatio: z.number().nullable(),
  coalesceCollapseRatio: z.number().nullable(),
  splitShardCounts: z.array(z.number().min(0)),
  agents: z.int().min(0).describe('Agents that reported the key in the latest window'),
  sketchError: z
    .object({
      agents: z.int().min(1).describe('Agents whose recent error sample includes the key'),
      meanRelativeError: z.number().min(0).describe('Mean (estimate - exact) / exact over those agents'),
      maxRelativeError: z.number().min(0),
    })
    .nullable()
    .describe(
      "The sketch's error on this key, measured against exact counts where the key is sampled (one key in 256, " +
        'by fingerprint); null for keys outside the sample',
    ),
  commandForms: z
    .array(z.enum(FORM_NAMES.map(([name]) => name) as [string, ...string[]]))
    .describe(
      'The command forms agents reported on the key over the last 30 windows: counter-write (INCR, DECR, INCRBY, ' +
        'DECRBY), get, set (plain, EX or PX), string-other, set-split (SADD, SREM, SMEMBERS, SCARD, SISMEMBER), ' +
        'set-other, zset-split (ZADD score-member pairs, ZREM, ZSCORE, ZCARD, ZRANGE/ZREVRANGE by rank), ' +
        'zset-other, other (anything else; also what agents that report no forms count as)',
    ),
  splitKind: z
    .enum(['counter'])
    .nullable()
    .describe(
      'The one split kind every reported form belongs to; null when none does (or nothing was reported): such ' +
        'a key is never split automatically, and an automatic split of it is demoted',
    ),
  watchAbortsPerSecond: z
    .number()
    .min(0)
    .describe(
      'Transactions watching the key that were aborted (EXEC answered nil: another client wrote a watched key ' +
        'first), per second cluster-wide, in the latest complete window, as agents and proxies counted them',
    ),
  contended: z
    .boolean()
    .describe(
      'Sustained write contention: at least HEATSINK_CONTENTION_ABORTS_RPS aborted transactions a second in each ' +
        'of the last HEATSINK_CONTENTION_WINDOWS complete windows',
    ),
})

/** Fastify's error shape, one named schema (`Error`) in the OpenAPI document. */
export const ErrorResponse = z
  .object({
    statusCode: z.int().min(400).max(599),
    code: z.string().optional().describe('Stable code of the failure, such as FST_ERR_VALIDATION'),
    error: z.string().describe('The status text'),
    message: z
      .string()
      .describe('What went wrong; for a 400, the field that failed: `body/splitFactor must be ...`'),
  })
  .meta({ id: 'Error' })

/** A documented error answer: `description` says when it happens. */
export function errorAnswer(description: string) {
  return { description, content: { 'application/json': { schema: ErrorResponse } } }
}

/** Body of GET /readyz. */
export const Readiness = z.object({
  status: z.enum(['ready', 'unready']),
  checks: z.record(z.string(), z.string()).describe('"ok", or why the check failed'),
})

/** Body of GET /healthz. */
export const Health = z.object({ status: z.literal('ok') })

/** The error answers several routes share. */
export const answers = {
  invalid: errorAnswer('A path parameter, query parameter or body field is invalid; the message names it'),
  unauthorized: errorAnswer(
    'No valid `Authorization: Bearer <token>` while HEATSINK_API_TOKEN is set (the answer has WWW-Authenticate)',
  ),
  registryUnavailable: errorAnswer('Postgres is unreachable: nothing was read or changed, retry later'),
}
