import { useState } from 'preact/hooks'
import { loadToken, saveToken } from '../token.js'

/** The API token box: typed by the operator, kept in this tab only, needed for writes when the API has one. */
export function TokenField({ required }: { required: boolean }) {
  const [token, setToken] = useState(loadToken() ?? '')
  const hint = !required
    ? 'writes are open: the API has no token'
    : token === ''
      ? 'writes need it'
      : 'kept for this tab only'
  return (
    <label class="token">
      API token
      <input
        type="password"
        autocomplete="off"
        placeholder="for promote and demote"
        value={token}
        data-testid="token"
        onInput={(e) => {
          setToken(e.currentTarget.value)
          saveToken(e.currentTarget.value.trim())
        }}
      />
      <small class={required && token === '' ? 'needed' : ''} data-testid="token-hint">
        {hint}
      </small>
    </label>
  )
}
