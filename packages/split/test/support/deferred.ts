/** A promise with its resolve exposed, to order concurrent work without sleeping. */
export interface Deferred<T> {
  readonly promise: Promise<T>
  resolve(value: T): void
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => {
    resolve = r
  })
  return { promise, resolve }
}
