import type { NodesView } from '@heatsink/protocol'
import { useEffect, useState } from 'preact/hooks'
import { connectLive, type LiveView } from '../live-connection.js'
import { usePolled } from '../use-polled.js'
import { AgentsTable } from './agents-table.js'
import { EventsTable } from './events-table.js'
import { HotKeysTable } from './hot-keys-table.js'
import { KeyPage } from './key-page.js'
import { MissStormsTable } from './miss-storms-table.js'
import { NodePage } from './node-page.js'
import { NodesPanel } from './nodes-panel.js'
import { PromoteForm } from './promote-form.js'
import { RateCharts } from './rate-charts.js'
import { parseRoute, type Route } from './routes.js'
import { TokenField } from './token-field.js'

const STATUS_TEXT = { connecting: 'connecting…', live: 'live', reconnecting: 'reconnecting…' } as const

/** The whole page: a header with the connection state and the token, then the overview or a key's page. */
export function App() {
  const [view, setView] = useState<LiveView>({ points: [], state: null, problem: null, status: 'connecting' })
  const [route, setRoute] = useState<Route>(parseRoute(location.hash))

  useEffect(() => connectLive(setView), [])
  useEffect(() => {
    const onHash = () => setRoute(parseRoute(location.hash))
    addEventListener('hashchange', onHash)
    return () => removeEventListener('hashchange', onHash)
  }, [])

  const { state, points } = view
  const lastWindow = points.at(-1)?.windowStart ?? 0
  const nodes = usePolled<NodesView>(route.page === 'overview' ? 'nodes' : null, lastWindow)
  return (
    <>
      <header class="top">
        <h1>
          <a href="#/">Heatsink</a>
        </h1>
        <span class={`connection ${view.status}`} data-testid="connection">
          {STATUS_TEXT[view.status]}
        </span>
        {state === null ? null : (
          <span class="facts">
            registry v{state.registryVersion} · hot at {state.hotRps.toLocaleString('en')} req/s · cool below{' '}
            {state.coolRps.toLocaleString('en')} req/s
          </span>
        )}
        <TokenField required={state?.writesNeedToken ?? true} />
      </header>
      {view.problem === null ? null : (
        <p class="status error" role="alert">
          The control plane cannot read its data right now ({view.problem}); the page shows the last picture
          and resumes by itself.
        </p>
      )}
      {state === null ? (
        <main>
          <p class="empty">Waiting for the control plane…</p>
        </main>
      ) : route.page === 'key' ? (
        <KeyPage keyName={route.key} state={state} version={lastWindow} />
      ) : route.page === 'node' ? (
        <NodePage node={route.node} version={lastWindow} />
      ) : (
        <main>
          <HotKeysTable hotkeys={state.hotkeys} now={Date.now()} />
          <RateCharts points={points} state={state} />
          <NodesPanel view={nodes.data} error={nodes.error} />
          <section>
            <h2>Promote a key</h2>
            <PromoteForm />
          </section>
          <section>
            <h2>Events</h2>
            <EventsTable events={state.events} />
          </section>
          <section>
            <h2>Miss storms</h2>
            <MissStormsTable storms={state.missStorms ?? []} />
          </section>
          <section>
            <h2>Agents ({state.agents.length})</h2>
            <AgentsTable agents={state.agents} registryVersion={state.registryVersion} />
          </section>
        </main>
      )}
    </>
  )
}
