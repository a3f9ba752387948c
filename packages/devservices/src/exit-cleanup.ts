// One shared 'exit' listener however many servers run, so starting many never trips MaxListenersExceeded.
const cleanups = new Set<() => void>()
let installed = false

/**
 * Runs `cleanup` synchronously when this process exits without having stopped the server itself.
 * 'exit' handlers cannot await, so `cleanup` must be synchronous. Returns a function that unregisters it.
 */
export function onProcessExit(cleanup: () => void): () => void {
  if (!installed) {
    installed = true
    process.on('exit', runAll)
  }
  cleanups.add(cleanup)
  return () => {
    cleanups.delete(cleanup)
  }
}

function runAll(): void {
  for (const cleanup of cleanups) {
    try {
      cleanup()
    } catch {
      // The process is exiting: a failed cleanup must not stop the others.
    }
  }
  cleanups.clear()
}
