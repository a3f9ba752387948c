import { useState } from 'preact/hooks'
import { type PromoteRequest, promote } from '../api.js'
import { loadToken } from '../token.js'
import { type WriteStatus, WriteStatusLine } from './write-status.js'

type Mitigation = PromoteRequest['mitigation']

/** Promote a key by hand (or change an active one): mitigation, split factor, TTL. */
export function PromoteForm({ initialKey = '' }: { initialKey?: string }) {
  const [key, setKey] = useState(initialKey)
  const [mitigation, setMitigation] = useState<Mitigation>('local_cache')
  const [splitFactor, setSplitFactor] = useState('4')
  const [ttl, setTtl] = useState('')
  const [status, setStatus] = useState<WriteStatus>({ kind: 'idle' })

  const submit = async (event: Event) => {
    event.preventDefault()
    if (key === '') {
      setStatus({ kind: 'failed', message: 'Type the key to promote.' })
      return
    }
    const body: PromoteRequest = { mitigation }
    if (mitigation === 'split') body.splitFactor = Number(splitFactor)
    if (ttl.trim() !== '') body.ttlSeconds = Number(ttl)
    setStatus({ kind: 'busy' })
    try {
      await promote(key, body, loadToken())
      setStatus({
        kind: 'done',
        message: `${key} promoted: ${mitigation}. Agents apply it within a heartbeat.`,
      })
    } catch (error) {
      setStatus({ kind: 'failed', message: `Promote failed: ${(error as Error).message}` })
    }
  }

  return (
    <form class="promote" onSubmit={submit} data-testid="promote-form">
      <label>
        Key
        <input value={key} required onInput={(e) => setKey(e.currentTarget.value)} name="key" />
      </label>
      <label>
        Mitigation
        <select
          value={mitigation}
          name="mitigation"
          onChange={(e) => setMitigation(e.currentTarget.value as Mitigation)}
        >
          <option value="local_cache">local_cache</option>
          <option value="split">split</option>
          <option value="coalesce">coalesce</option>
          <option value="replica_read">replica_read</option>
        </select>
      </label>
      {mitigation === 'split' ? (
        <label>
          Split factor
          <select
            value={splitFactor}
            name="splitFactor"
            onChange={(e) => setSplitFactor(e.currentTarget.value)}
          >
            {[2, 4, 8, 16, 32, 64].map((n) => (
              <option key={n} value={String(n)}>
                {n}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      <label>
        TTL (s)
        <input
          value={ttl}
          name="ttl"
          inputMode="numeric"
          placeholder="none"
          onInput={(e) => setTtl(e.currentTarget.value)}
        />
      </label>
      <button type="submit" disabled={status.kind === 'busy'}>
        Promote
      </button>
      <WriteStatusLine status={status} />
    </form>
  )
}
