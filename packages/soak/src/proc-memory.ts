import { readFile } from 'node:fs/promises'

/**
 * Resident set size of any process by pid, from /proc (Linux): the same figure for Node processes, redis-server
 * or a proxy written in anything, so every role of the soak is measured alike. Null once the process is gone.
 */
export async function residentBytes(pid: number): Promise<number | null> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8')
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(status)
    return match === null ? null : Number(match[1]) * 1024
  } catch {
    return null
  }
}
