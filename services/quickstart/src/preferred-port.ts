/**
 * Runs `start` on `preferred`, or, when another process holds that port (another quickstart, a local service),
 * on a port the system picks. Trying is the only race-free check: a port found free may be taken before the
 * listen. Resolves with what `start` returned and whether it fell back.
 */
export async function startOnPreferredPort<T>(
  preferred: number,
  start: (port: number) => Promise<T>,
): Promise<{ value: T; fellBack: boolean }> {
  try {
    return { value: await start(preferred), fellBack: false }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error
  }
  return { value: await start(0), fellBack: true }
}
