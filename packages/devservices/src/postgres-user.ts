import { readFileSync } from 'node:fs'
import { findExecutable, pathDirs } from './find-executable.js'

/** How to run Postgres' tools as a user they accept, and who must own their files. */
export interface PostgresRunner {
  /** The command line that runs `command args` as that user. */
  wrap(command: string, args: readonly string[]): { command: string; args: string[] }
  /** uid and gid to give the data and socket directories, or undefined to keep ours. */
  readonly owner: { uid: number; gid: number } | undefined
}

/**
 * Runs tools as ourselves, or as the `postgres` user through runuser when we are root, since initdb and
 * pg_ctl refuse to run as root. Returns a reason string when root has no way to switch user.
 */
export function postgresRunner(): PostgresRunner | string {
  if (process.getuid?.() !== 0) {
    return { wrap: (command, args) => ({ command, args: [...args] }), owner: undefined }
  }
  const owner = lookupUser('postgres')
  if (owner === undefined)
    return 'this process runs as root, which initdb refuses, and there is no postgres user to run it as'
  const runuser = findExecutable('runuser', [...pathDirs(), '/usr/sbin', '/sbin'])
  if (runuser === undefined)
    return 'this process runs as root, which initdb refuses, and runuser is not installed to switch to the postgres user'
  return {
    wrap: (command, args) => ({ command: runuser, args: ['-u', 'postgres', '--', command, ...args] }),
    owner,
  }
}

function lookupUser(name: string): { uid: number; gid: number } | undefined {
  let passwd: string
  try {
    passwd = readFileSync('/etc/passwd', 'utf8')
  } catch {
    return undefined
  }
  for (const line of passwd.split('\n')) {
    const [user, , uid, gid] = line.split(':')
    if (user === name && uid !== undefined && gid !== undefined) return { uid: Number(uid), gid: Number(gid) }
  }
  return undefined
}
