import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { findExecutable, pathDirs } from './find-executable.js'

// Debian and Ubuntu install the server binaries here, off PATH, one directory per major version.
const DEBIAN_POSTGRES_ROOT = '/usr/lib/postgresql'

/** The initdb and pg_ctl of one installation. */
export interface PostgresBinaries {
  readonly initdb: string
  readonly pgCtl: string
}

/** Where ensurePostgres looks for initdb and pg_ctl by default: PATH, then Debian's versioned dirs, newest first. */
export function defaultPostgresBinDirs(): string[] {
  return [...pathDirs(), ...debianVersionDirs()]
}

/** initdb and pg_ctl from the first directory holding both, so the two always come from one version. */
export function findPostgresBinaries(dirs: readonly string[]): PostgresBinaries | undefined {
  for (const dir of dirs) {
    const initdb = findExecutable('initdb', [dir])
    const pgCtl = findExecutable('pg_ctl', [dir])
    if (initdb !== undefined && pgCtl !== undefined) return { initdb, pgCtl }
  }
  return undefined
}

function debianVersionDirs(): string[] {
  let versions: string[]
  try {
    versions = readdirSync(DEBIAN_POSTGRES_ROOT).filter((name) => /^\d+(\.\d+)?$/.test(name))
  } catch {
    return []
  }
  return versions
    .sort((a, b) => Number(b) - Number(a))
    .map((version) => join(DEBIAN_POSTGRES_ROOT, version, 'bin'))
}
