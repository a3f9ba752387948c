/** Lets a long-running command (top, events --follow) end cleanly on Ctrl-C or SIGTERM. */
export interface StopSignal {
  /** True once a stop was asked. */
  readonly requested: boolean
  /** Waits `ms`, or less if a stop is asked meanwhile. */
  pause(ms: number): Promise<void>
}

/** A StopSignal driven by an AbortSignal. */
export function stopSignal(signal: AbortSignal): StopSignal {
  return {
    get requested() {
      return signal.aborted
    },
    pause: (ms) =>
      new Promise((resolve) => {
        const timer = setTimeout(done, ms)
        signal.addEventListener('abort', done, { once: true })
        function done() {
          clearTimeout(timer)
          signal.removeEventListener('abort', done)
          resolve()
        }
      }),
  }
}
