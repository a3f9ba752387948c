import type { Command } from '../command.js'
import { duration, percent } from '../format.js'
import { renderTable } from '../table.js'

/** `heatsink agents`: the agents reporting, stale ones marked. */
export const agentsCommand: Command = {
  name: 'agents',
  summary: 'list the agents reporting, and which are stale',
  usage: 'agents',
  options: {},
  optionHelp: [],
  positionals: 0,
  run: async ({ client, json, out }) => {
    const { agents } = await client.agents()
    if (json) return out(JSON.stringify(agents, null, 2))
    if (agents.length === 0) return out('No agent has reported in the last ten minutes.')
    out(
      renderTable(
        [
          { heading: 'AGENT' },
          { heading: 'LAST REPORT', numeric: true },
          { heading: 'DROPPED', numeric: true },
          { heading: 'REGISTRY', numeric: true },
          { heading: 'SKETCH ERR MEAN/MAX', numeric: true },
          { heading: 'STATE' },
        ],
        agents.map((agent) => [
          agent.agentId,
          `${duration(agent.lastReportAgeMs)} ago`,
          String(agent.reportsDropped),
          agent.registryVersion === null ? '-' : String(agent.registryVersion),
          agent.sketchError === null || agent.sketchError.sampled === 0
            ? '-'
            : `${percent(agent.sketchError.meanRelativeError)}/${percent(agent.sketchError.maxRelativeError)}`,
          agent.stale ? 'STALE' : 'ok',
        ]),
      ),
    )
  },
}
