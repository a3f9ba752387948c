/*
 * Test doubles for code that loads through a stampede guard (`@heatsink/stampede/testing`): promises and loaders
 * that a test settles when it chooses, so concurrency tests order their steps instead of sleeping.
 */

/** A promise with its resolve and reject exposed. */
export interface Deferred<T> {
  promise: Promise<T>
  resolve(value: T): void
  reject(error: unknown): void
}

/** A promise the test settles. */
export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/** A loader that counts its calls and returns whatever the test hands each call. */
export interface ControlledLoader<T> {
  (): Promise<T>
  readonly calls: number
  /** The deferred of the n-th call (0-based), once it has happened. */
  call(n: number): Deferred<T>
}

/** A loader whose every call waits until the test settles it through call(n). */
export function controlledLoader<T>(): ControlledLoader<T> {
  const calls: Deferred<T>[] = []
  const loader = (() => {
    const call = deferred<T>()
    calls.push(call)
    return call.promise
  }) as ControlledLoader<T>
  Object.defineProperty(loader, 'calls', { get: () => calls.length })
  loader.call = (n) => {
    const call = calls[n]
    if (call === undefined) throw new Error(`loader call ${n} has not happened (${calls.length} so far)`)
    return call
  }
  return loader
}
