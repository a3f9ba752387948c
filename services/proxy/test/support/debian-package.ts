import { execFileSync } from 'node:child_process'
import { ensureDebianPackage } from '@heatsink/devservices'

export { ensureDebianPackage }

/** Debian's Python (python3-redis installs for it, not for another python3 first on PATH). */
export const PYTHON = '/usr/bin/python3'

/** Makes sure redis-py is importable by Debian's Python. */
export function ensureRedisPy(): string {
  ensureDebianPackage(PYTHON, 'python3')
  try {
    execFileSync(PYTHON, ['-c', 'import redis'], { stdio: 'pipe' })
  } catch {
    ensureDebianPackage('/usr/lib/python3/dist-packages/redis/__init__.py', 'python3-redis')
  }
  return PYTHON
}
