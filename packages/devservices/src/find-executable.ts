import { accessSync, constants, statSync } from 'node:fs'
import { delimiter, isAbsolute, join } from 'node:path'

/** The directories of PATH, in order. */
export function pathDirs(path: string | undefined = process.env.PATH): string[] {
  return (path ?? '').split(delimiter).filter((dir) => dir !== '')
}

/** The first executable named `name` in `dirs`, or undefined; an absolute `name` is checked as is. */
export function findExecutable(name: string, dirs: readonly string[] = pathDirs()): string | undefined {
  const candidates = isAbsolute(name) ? [name] : dirs.map((dir) => join(dir, name))
  return candidates.find(isExecutable)
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK)
    return statSync(file).isFile()
  } catch {
    return false
  }
}
