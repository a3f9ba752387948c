import { ProtocolError } from '../errors.js'

const SPACE = new Set([32, 9, 10, 13, 11, 12, 0])
const HEX = /^[0-9a-fA-F]{2}$/

/**
 * An inline request's arguments as Redis' sdssplitargs splits them: words separated by whitespace, "double
 * quoted" with \n \r \t \b \a \\ \" and \xHH escapes, 'single quoted' with \' only. A closing quote must be
 * followed by a space or the end; otherwise, or for a quote left open, "unbalanced quotes in request".
 */
export function splitInlineArguments(line: Buffer): Buffer[] {
  const args: Buffer[] = []
  let i = 0
  const n = line.length
  for (;;) {
    while (i < n && SPACE.has(line[i] as number)) i++
    if (i >= n) return args
    const quote = line[i]
    if (quote !== 34 && quote !== 39) {
      const start = i
      while (i < n && !SPACE.has(line[i] as number)) i++
      args.push(line.subarray(start, i))
      continue
    }
    const bytes: number[] = []
    i++
    for (;;) {
      if (i >= n) throw new ProtocolError('unbalanced quotes in request')
      const c = line[i] as number
      if (c === quote) {
        i++
        if (i < n && !SPACE.has(line[i] as number)) throw new ProtocolError('unbalanced quotes in request')
        break
      }
      if (c === 92 && i + 1 < n) {
        const next = line[i + 1] as number
        if (quote === 39) {
          if (next === 39) {
            bytes.push(39)
            i += 2
            continue
          }
        } else {
          const hex = line.toString('latin1', i + 2, i + 4)
          if (next === 120 && HEX.test(hex)) {
            bytes.push(Number.parseInt(hex, 16))
            i += 4
            continue
          }
          bytes.push(ESCAPES.get(next) ?? next)
          i += 2
          continue
        }
      }
      bytes.push(c)
      i++
    }
    args.push(Buffer.from(bytes))
  }
}

const ESCAPES = new Map([
  [110, 10],
  [114, 13],
  [116, 9],
  [98, 8],
  [97, 7],
])
