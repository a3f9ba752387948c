import type { Candidate } from './candidate.js'

/**
 * A binary min-heap of candidates ordered by `priority`, the count they had when last placed.
 * Counts only rise within a window, so a stale priority is a lower bound; the true minimum is found by
 * re-placing stale tops until the top is fresh. Recording a hit therefore never touches the heap.
 */
export class CandidateHeap {
  readonly #items: Candidate[] = []

  get size(): number {
    return this.#items.length
  }

  /** A lower bound on the smallest count in the heap (0 when empty). */
  floor(): number {
    return this.#items[0]?.priority ?? 0
  }

  push(candidate: Candidate): void {
    candidate.priority = candidate.count
    candidate.heapIndex = this.#items.length
    this.#items.push(candidate)
    this.#siftUp(candidate.heapIndex)
  }

  /** The candidate with the smallest current count, after refreshing stale positions. */
  min(): Candidate | undefined {
    const items = this.#items
    for (;;) {
      const top = items[0]
      if (top === undefined || top.priority === top.count) return top
      top.priority = top.count
      this.#siftDown(0)
    }
  }

  /** Removes the top; call min() first so it is the true minimum. */
  popMin(): Candidate | undefined {
    const items = this.#items
    const top = items[0]
    if (top === undefined) return undefined
    const last = items.pop() as Candidate
    if (last !== top) {
      items[0] = last
      last.heapIndex = 0
      this.#siftDown(0)
    }
    top.heapIndex = -1
    return top
  }

  /** Removes a candidate from anywhere in the heap. */
  remove(candidate: Candidate): void {
    const items = this.#items
    const index = candidate.heapIndex
    if (index < 0 || items[index] !== candidate) return
    const last = items.pop() as Candidate
    candidate.heapIndex = -1
    if (last === candidate) return
    items[index] = last
    last.heapIndex = index
    this.#siftDown(index)
    this.#siftUp(last.heapIndex)
  }

  values(): readonly Candidate[] {
    return this.#items
  }

  clear(): void {
    for (const c of this.#items) c.heapIndex = -1
    this.#items.length = 0
  }

  #siftUp(index: number): void {
    const items = this.#items
    const item = items[index] as Candidate
    while (index > 0) {
      const parentIndex = (index - 1) >>> 1
      const parent = items[parentIndex] as Candidate
      if (parent.priority <= item.priority) break
      items[index] = parent
      parent.heapIndex = index
      index = parentIndex
    }
    items[index] = item
    item.heapIndex = index
  }

  #siftDown(index: number): void {
    const items = this.#items
    const length = items.length
    const item = items[index] as Candidate
    for (;;) {
      const left = 2 * index + 1
      if (left >= length) break
      const right = left + 1
      let child = left
      if (right < length && (items[right] as Candidate).priority < (items[left] as Candidate).priority)
        child = right
      const smaller = items[child] as Candidate
      if (smaller.priority >= item.priority) break
      items[index] = smaller
      smaller.heapIndex = index
      index = child
    }
    items[index] = item
    item.heapIndex = index
  }
}
