import { z } from 'zod'

// Shapes and types only: ranges are checked by resolveOptions, whose messages say what the range is. Objects a
// user builds from scratch are strict (an unknown key is a typo); objects that are often class instances or a
// library's (a clock, a pino logger, a codec, a client) are checked only for what the agent calls on them.

const count = z.number().optional()
const fn = (what: string) =>
  z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function', `must be ${what}`)
const withMethods = (methods: readonly string[], message: string) =>
  z.custom<object>(
    (value) =>
      typeof value === 'object' &&
      value !== null &&
      methods.every((method) => typeof (value as Record<string, unknown>)[method] === 'function'),
    message,
  )

export const l1Schema = z.strictObject({
  maxEntries: count,
  ttlFraction: count,
  maxTtlMs: count,
  maxBytes: count,
  fillTimeoutMs: count,
})

export const stampedeSchema = z.strictObject({
  leaseMs: count,
  maxLeaseMs: count,
  pollMs: count,
  maxWaitMs: count,
})

export const sketchSchema = z.strictObject({
  depth: count,
  width: count,
  seed: count,
  topK: count,
  capacity: count,
  maxCandidates: count,
  deferColdKeys: z.boolean().optional(),
  errorSampling: count,
})

/** createAgent's options less the client: the front door's `heatsink: {...}`. */
export const heatsinkOptionsSchema = z.strictObject({
  namespace: z.string().optional(),
  agentId: z.string().optional(),
  windowMs: count,
  l1: l1Schema.optional(),
  clock: withMethods(
    ['now', 'setTimeout', 'clearTimeout'],
    'must have now(), setTimeout() and clearTimeout()',
  ).optional(),
  log: withMethods(
    ['debug', 'info', 'warn', 'error'],
    'must have debug(), info(), warn() and error()',
  ).optional(),
  fastReportFloor: count,
  maxPartialReportsPerWindow: count,
  reportTimeoutMs: count,
  registryCheckMs: count,
  readyTimeoutMs: count,
  closeTimeoutMs: count,
  maxReplicaLagMs: count,
  sketch: sketchSchema.optional(),
  codec: withMethods(['encode', 'decode'], 'must have encode(value) and decode(text) functions').optional(),
  random: fn('a function returning a number in [0, 1)').optional(),
  stampede: stampedeSchema.optional(),
  registryKey: z.string().optional(),
  // A URL is checked by resolveOptions, a client by createAgent.
  control: z
    .custom<object | string>(
      (value) =>
        typeof value === 'string' ||
        (typeof value === 'object' &&
          value !== null &&
          typeof (value as Record<string, unknown>)['duplicate'] === 'function'),
      'must be a redis://, rediss:// or redis+sentinel:// URL or an ioredis Redis client',
    )
    .optional(),
})

/** createAgent's options; what `redis` must be is checked by createAgent (by what a client can do). */
export const agentOptionsSchema = heatsinkOptionsSchema.extend({ redis: z.unknown() })
