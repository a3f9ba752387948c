import type { RegistryChange } from '@heatsink/protocol'
import type { Command } from '../command.js'
import { CliError, ExitCode } from '../exit-codes.js'
import { duration, rate, timestamp } from '../format.js'

const FOLLOW_INTERVAL_MS = 1000

/** `heatsink events [--follow]`: the registry's changes, oldest first, one line each. */
export const eventsCommand: Command = {
  name: 'events',
  summary: 'print registry changes (promotions, demotions); --follow keeps printing new ones',
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
    const print = (events: RegistryChange[]) => {
      // The API lists newest first; a log reads oldest first.
      for (const event of [...events].reverse()) out(json ? JSON.stringify(event) : eventLine(event))
    }
    let { events } = await client.events(0, limit)
    print(events)
    if (values.follow !== true) return
    let last = events[0]?.version ?? 0
    while (!stop.requested) {
      await stop.pause(FOLLOW_INTERVAL_MS)
      if (stop.requested) break
      ;({ events } = await client.events(last, 500))
      print(events)
      last = events[0]?.version ?? last
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
