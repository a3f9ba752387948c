import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'

/**
 * Makes sure `path` exists, installing Debian's `debianPackage` with apt-get when it does not (CI runs as root
 * on Debian): a test that needs a real client installs it rather than skipping.
 */
export function ensureDebianPackage(path: string, debianPackage: string): string {
  if (existsSync(path)) return path
  const install = () =>
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', debianPackage], {
      stdio: 'pipe',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    })
  try {
    install()
  } catch {
    // The package lists may be missing or stale on a fresh machine.
    execFileSync('apt-get', ['update'], { stdio: 'pipe' })
    install()
  }
  if (!existsSync(path)) throw new Error(`apt-get installed ${debianPackage}, yet ${path} is still missing`)
  return path
}
