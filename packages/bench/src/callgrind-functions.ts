import { existsSync, readFileSync } from 'node:fs'

/**
 * Self instructions per function in a callgrind dump of a Node process started with `--perf-basic-prof`.
 * Callgrind knows no names for V8's generated code: it names each such function by its first address. V8's
 * `/tmp/perf-<pid>.map` lists every piece of code it generated (start, size, name), so each address is charged
 * to the JavaScript function that contains it; native code keeps callgrind's own name.
 */
export function selfCostByFunction(dumpText: string, perfMapPath: string): Map<string, number> {
  const resolve = jitResolver(perfMapPath)
  const names = new Map<string, string>()
  const costs = new Map<string, number>()
  let current = ''
  let skipNext = false
  for (const line of dumpText.split('\n')) {
    if (line.startsWith('fn=')) {
      current = resolve(compressedName(line.slice(3), names))
      continue
    }
    if (line.startsWith('cfn=') || line.startsWith('cfi=') || line.startsWith('cob=')) {
      if (line.startsWith('cfn=')) compressedName(line.slice(4), names)
      continue
    }
    // The cost line after `calls=` is what the call cost (inclusive), not the caller's own work.
    if (line.startsWith('calls=')) {
      skipNext = true
      continue
    }
    const first = line.charCodeAt(0)
    const isCost = (first >= 48 && first <= 57) || first === 43 || first === 45 || first === 42
    if (!isCost) continue
    if (skipNext) {
      skipNext = false
      continue
    }
    const fields = line.split(' ')
    const cost = Number(fields[fields.length - 1])
    if (Number.isFinite(cost)) costs.set(current, (costs.get(current) ?? 0) + cost)
  }
  return costs
}

// "(12) name" defines id 12; "(12)" refers to it (callgrind's name compression).
function compressedName(text: string, names: Map<string, string>): string {
  const match = /^\((\d+)\)(?: (.*))?$/.exec(text)
  if (match === null) return text
  const [, id, name] = match as unknown as [string, string, string | undefined]
  if (name !== undefined) names.set(id, name)
  return names.get(id) ?? text
}

interface JitCode {
  start: bigint
  end: bigint
  name: string
}

// Maps callgrind's "0x…" names to the perf map's code objects (a later entry at the same start wins: V8 reuses
// code space).
function jitResolver(perfMapPath: string): (name: string) => string {
  if (!existsSync(perfMapPath)) return (name) => name
  const byStart = new Map<bigint, JitCode>()
  for (const line of readFileSync(perfMapPath, 'utf8').split('\n')) {
    const match = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/i.exec(line)
    if (match === null) continue
    const start = BigInt(`0x${match[1]}`)
    byStart.set(start, { start, end: start + BigInt(`0x${match[2]}`), name: match[3] as string })
  }
  const codes = [...byStart.values()].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0))
  return (name) => {
    if (!/^0x[0-9a-f]+$/i.test(name)) return name
    const address = BigInt(name)
    let low = 0
    let high = codes.length - 1
    while (low <= high) {
      const middle = (low + high) >> 1
      const code = codes[middle] as JitCode
      if (address < code.start) high = middle - 1
      else if (address >= code.end) low = middle + 1
      else return code.name
    }
    return 'JIT code (unnamed)'
  }
}
