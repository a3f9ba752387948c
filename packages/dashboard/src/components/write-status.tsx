/** What the last write from the page did: nothing yet, in progress, done, or failed and why. */
export type WriteStatus =
  | { kind: 'idle' }
  | { kind: 'busy' }
  | { kind: 'done'; message: string }
  | { kind: 'failed'; message: string }

/** The write's outcome, announced to screen readers as it changes. */
export function WriteStatusLine({ status }: { status: WriteStatus }) {
  if (status.kind === 'idle') return null
  if (status.kind === 'busy') return <p class="status">Sending…</p>
  return (
    <p
      class={status.kind === 'failed' ? 'status error' : 'status ok'}
      role="alert"
      data-testid="write-status"
    >
      {status.message}
    </p>
  )
}
