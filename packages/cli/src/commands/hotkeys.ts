import type { Command } from '../command.js'
import { duration, rate } from '../format.js'
import { renderTable } from '../table.js'

/** `heatsink hotkeys`: the registry now. */
export const hotkeysCommand: Command = {
  name: 'hotkeys',
  summary: 'list the keys in the registry',
  usage: 'hotkeys',
  options: {},
  optionHelp: [],
  positionals: 0,
  run: async ({ client, json, out }) => {
    const { hotkeys } = await client.hotkeys()
    if (json) return out(JSON.stringify(hotkeys, null, 2))
    if (hotkeys.length === 0) return out('No key is in the registry.')
    const now = Date.now()
    out(
      renderTable(
        [
          { heading: 'KEY' },
          { heading: 'MITIGATION' },
          { heading: 'SPLIT', numeric: true },
          { heading: 'SOURCE' },
          { heading: 'REQ/S', numeric: true },
          { heading: 'PROMOTED', numeric: true },
          { heading: 'EXPIRES', numeric: true },
          { heading: 'VERSION', numeric: true },
        ],
        hotkeys.map((hot) => [
          hot.key,
          hot.mitigation,
          String(hot.splitFactor),
          hot.source,
          rate(hot.requestsPerSecond),
          `${duration(now - Date.parse(hot.detectedAt))} ago`,
          hot.expiresAt === null ? '-' : `in ${duration(Date.parse(hot.expiresAt) - now)}`,
          String(hot.version),
        ]),
      ),
    )
  },
}
