import type { RegistryChange } from '@heatsink/protocol'
import type { Command } from '../command.js'
import { CliError, ExitCode } from '../exit-codes.js'
import { duration, rate, timestamp } from '../format.js'
import { isMissStorm, stormLine, type TimelineEvent, timeline } from './storm-line.js'

const FOLLOW_INTERVAL_MS = 1000

/** `heatsink events [--follow]`: the registry's changes, oldest first, one line each. */
export const eventsCommand: Command = {
  name: 'events',
  summary: 'print registry changes (promotions, demotions) and miss storms; --follow keeps printing new ones',
  usage: 'events [--follow] [--limit N]',
  options: { follow: { type: 'boolean', short: 'f' }, limit: { type: 'string', short: 'n' } },
  optionHelp: [
    '-f, --follow    keep printing changes as they happen, until Ctrl-C',
    '-n, --limit N   how many past changes to print first (default 20, at most 500)',
  ],
  positionals: 0,
  run: async ({ client, json, out, stop }, values) => {
    const limit = Number(values.limit ?? 20)
    if (!Number.isInteger(limit) || limit < 1 || limit > 500) {
      throw new CliError(
        `--limit must be a whole number from 1 to 500, got '${String(values.limit)}'`,
        ExitCode.usage,
      )
    }
    const print = (events: TimelineEvent[]) => {
      for (const event of events) {
        if (json) out(JSON.stringify(event))
        else out(isMissStorm(event) ? stormLine(event) : eventLine(event))
      }
    }
    let { events, missStorms = [] } = await client.events(0, limit)
    // The two lists are limited apart; the newest `limit` of them together are printed.
    print(timeline(events, missStorms).slice(-limit))
    if (values.follow !== true) return
    let last = events[0]?.version ?? 0
    // Storm ids are '<ms>-<seq>'; '0-0' is before every one.
    let lastStorm = missStorms[0]?.id ?? '0-0'
    while (!stop.requested) {
      await stop.pause(FOLLOW_INTERVAL_MS)
      if (stop.requested) break
      ;({ events, missStorms = [] } = await client.events(last, 500, lastStorm))
      print(timeline(events, missStorms))
      last = events[0]?.version ?? last
      lastStorm = missStorms[0]?.id ?? lastStorm
    }
  },
}

/** One change as one line: time, version, what, key, source and who, how fast, why. */
export function eventLine(event: RegistryChange): string {
  const what =
    event.type === 'demote'
      ? 'demote'
      : `${event.type} ${event.mitigation}${event.mitigation === 'split' ? ` x${event.splitFactor}` : ''}`
  const latency =
    event.onsetToMitigationMs === null ? '' : ` onset->mitigation ${duration(event.onsetToMitigationMs)}`
  const traffic = event.requestsPerSecond === null ? '' : ` at ${rate(event.requestsPerSecond)} req/s`
  return `${timestamp(event.at)} v${event.version} ${what} ${JSON.stringify(event.key)} (${event.source}, by ${event.actor})${traffic}${latency}: ${event.reason}`
}
