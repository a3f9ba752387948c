// Every reply is watched until a key's 64th read in a window; then the stride between watched replies doubles
// with the read count (32 watched per doubling) up to one reply in 64, from the 2,048th read on.
const FULLY_WATCHED_LOG2 = 6
const WATCHED_PER_DOUBLING_LOG2 = FULLY_WATCHED_LOG2 - 1
const MAX_STRIDE_LOG2 = 6

/**
 * Whether the reply to a key's `reads`-th read this window is watched for a miss, and what a miss seen there
 * stands for: 0 when it is not watched, else the weight to count it with (the reads since the reply watched
 * before it), so that the weighted misses estimate the key's true misses without bias.
 *
 * Watching a reply costs a promise reaction: watching one read in 8 measured about 2% of a pass-through GET's
 * throughput. The aggregator needs misses only as a share of a hot key's reads, to choose its mitigation; one
 * reply in 64 gives a key read 100,000 times a window that share within about a point (one standard deviation),
 * and a key read fewer than 64 times has every reply watched.
 */
export function missSampleWeight(reads: number): number {
  if (reads === 0) return 0
  const stride = strideAt(reads)
  if ((reads & (stride - 1)) !== 0) return 0
  // At the first read of a doubling the reply watched before was the previous stride away, half this one.
  return strideAt(reads - 1)
}

// The distance between watched replies around a key's `reads`-th read.
function strideAt(reads: number): number {
  const shift = Math.min(MAX_STRIDE_LOG2, 31 - Math.clz32(reads) - WATCHED_PER_DOUBLING_LOG2)
  return shift <= 0 ? 1 : 1 << shift
}
