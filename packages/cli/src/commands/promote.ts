import type { PromoteBody } from '../client.js'
import type { Command } from '../command.js'
import { CliError, ExitCode } from '../exit-codes.js'

const MITIGATIONS = ['local_cache', 'split', 'coalesce', 'replica_read']

/** `heatsink promote KEY --mitigation M`: put a key in the registry by hand, or change its entry. */
export const promoteCommand: Command = {
  name: 'promote',
  summary: 'promote a key (or change its mitigation)',
  usage: 'promote KEY --mitigation local_cache|split|coalesce|replica_read [--ttl S] [--split-factor N]',
  options: {
    mitigation: { type: 'string', short: 'm' },
    ttl: { type: 'string' },
    'split-factor': { type: 'string' },
  },
  optionHelp: [
    '-m, --mitigation M     local_cache, split, coalesce or replica_read (required)',
    '    --ttl S            the promotion lapses after S seconds (default: until demoted)',
    '    --split-factor N   shards of a split key, a power of two (only with split)',
  ],
  positionals: 1,
  run: async ({ client, json, out }, values, [key]) => {
    const mitigation = values.mitigation
    if (typeof mitigation !== 'string') throw new CliError('--mitigation is required', ExitCode.usage)
    if (!MITIGATIONS.includes(mitigation)) {
      throw new CliError(
        `--mitigation must be one of ${MITIGATIONS.join(', ')}, got '${mitigation}'`,
        ExitCode.usage,
      )
    }
    const body: PromoteBody = { mitigation }
    if (values.ttl !== undefined) body.ttlSeconds = integer('--ttl', values.ttl)
    if (values['split-factor'] !== undefined)
      body.splitFactor = integer('--split-factor', values['split-factor'])
    const entry = await client.promote(key as string, body)
    if (json) return out(JSON.stringify(entry, null, 2))
    const split = entry.mitigation === 'split' ? ` x${entry.splitFactor}` : ''
    const ttl = entry.ttlSeconds === null ? '' : `, for ${entry.ttlSeconds}s`
    out(
      `${entry.created ? 'promoted' : 'updated'} ${entry.key}: ${entry.mitigation}${split}${ttl} (registry v${entry.version})`,
    )
  },
}

// The API checks ranges and says which field failed; here only "is it a whole number" is a usage error.
function integer(flag: string, text: string | boolean): number {
  const value = Number(text)
  if (typeof text !== 'string' || !Number.isInteger(value)) {
    throw new CliError(`${flag} must be a whole number, got '${String(text)}'`, ExitCode.usage)
  }
  return value
}
