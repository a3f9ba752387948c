import { expect } from 'vitest'

/** Two reads of a local_cache key: the second is answered from L1 (a hit counted) with `expected`. */
export async function expectL1Hit(
  read: () => Promise<unknown>,
  hits: () => number,
  expected: string,
): Promise<void> {
  expect(await read()).toBe(expected)
  const before = hits()
  expect(await read()).toBe(expected)
  expect(hits()).toBe(before + 1)
}

// Far below L1's 5 s lifetime of a key without TTL: only an invalidation ends the old copy this soon.
const INVALIDATION_BOUND_MS = 500

/** Reads until `expected` comes back, failing after INVALIDATION_BOUND_MS. */
export async function readsWithin(read: () => Promise<unknown>, expected: string): Promise<void> {
  await waitUntil(async () => (await read()) === expected, `a read of ${expected}`, INVALIDATION_BOUND_MS)
}

/** Polls an asynchronous `condition` every 5 ms until it holds; fails after `timeoutMs` naming `what`. */
export async function waitUntil(
  condition: () => Promise<boolean>,
  what: string,
  timeoutMs = 5000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}
