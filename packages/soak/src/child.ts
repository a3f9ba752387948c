import type { ChildProcess } from 'node:child_process'

/** Resolves once `child` has exited; SIGKILL after `graceMs` if SIGTERM was not enough. */
export async function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  await exited
  clearTimeout(timer)
}

/** Counts lines a child prints at pino's error level or above (`"level":50` or 60). */
export function countErrorLines(
  child: ChildProcess,
  onLine: (line: string) => void = () => {},
): () => number {
  let errors = 0
  let partial = ''
  const take = (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n')
    partial = lines.pop() ?? ''
    for (const line of lines) {
      if (/"level":(50|60)\b/.test(line)) {
        errors++
        onLine(line)
      }
    }
  }
  child.stdout?.on('data', take)
  child.stderr?.on('data', take)
  return () => errors
}
