import { closest, distance } from 'fastest-levenshtein'

/**
 * The valid name a misspelt `name` most likely meant: one differing only in case, else the closest by edit
 * distance when it is within a third of the name's length (at least 2, so `maxEntrys` finds `maxEntries`);
 * undefined when nothing is that close, as a far-fetched suggestion misleads more than none.
 */
export function nearestName(name: string, candidates: readonly string[]): string | undefined {
  const lower = name.toLowerCase()
  const sameLetters = candidates.find((candidate) => candidate.toLowerCase() === lower)
  if (sameLetters !== undefined || candidates.length === 0) return sameLetters
  const best = closest(name, candidates as string[])
  return distance(name, best) <= Math.max(2, Math.floor(name.length / 3)) ? best : undefined
}
