import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, chromium } from 'playwright-core'

/** Debian's chromium: playwright cannot download its own browsers here. */
export const CHROMIUM = '/usr/bin/chromium'

// The flags the project's machines need (no sandbox as root, no GPU) and quiet ones: nothing phones home.
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/**
 * Installs Debian's chromium when it is missing (CI runs as root on Debian), so a browser test runs or fails,
 * never skips.
 */
export function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return
  const install = () =>
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { stdio: 'inherit' })
  try {
    install()
  } catch {
    // A fresh machine has no package lists yet.
    execFileSync('apt-get', ['update'], { stdio: 'inherit' })
    install()
  }
}

/** A headless chromium with a fresh profile (its own --user-data-dir), removed when closed. */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  ensureChromium()
  const profile = mkdtempSync(join(tmpdir(), 'heatsink-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
  })
  return {
    context,
    close: async () => {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    },
  }
}
