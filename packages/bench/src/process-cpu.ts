import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'

/** What a process has spent so far: CPU time over all its threads, and its read and write system calls. */
export interface ProcessCost {
  cpuNs: number
  readCalls: number
  writeCalls: number
}

/**
 * CPU time from each thread's /proc schedstat (nanoseconds on the CPU, user and kernel alike) rather than
 * /proc/<pid>/stat's utime+stime, whose 10 ms ticks would be a 1% step on a second of load. The system call
 * counts (/proc/<pid>/io) say whether two runs batched their reads and writes alike, which CPU per request
 * depends on as much as on the code.
 */
export function processCost(pid: number): ProcessCost {
  let cpuNs = 0
  for (const thread of readdirSync(`/proc/${pid}/task`)) {
    try {
      cpuNs += Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, 'utf8').split(' ')[0])
    } catch {
      // A thread that ended between the listing and the read: its time is gone from every reading alike.
    }
  }
  const io = readFileSync(`/proc/${pid}/io`, 'utf8')
  const field = (name: string) => Number(new RegExp(`^${name}: (\\d+)`, 'm').exec(io)?.[1] ?? Number.NaN)
  return { cpuNs, readCalls: field('syscr'), writeCalls: field('syscw') }
}

/** The cost between two readings of one process. */
export function costBetween(before: ProcessCost, after: ProcessCost): ProcessCost {
  return {
    cpuNs: after.cpuNs - before.cpuNs,
    readCalls: after.readCalls - before.readCalls,
    writeCalls: after.writeCalls - before.writeCalls,
  }
}

/** Pins every thread of `pid` to one CPU, so a measured process and its load never share a core. */
export function pinToCpu(pid: number, cpu: number): void {
  execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' })
}
