import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { selfCostByFunction } from './callgrind-functions.js'
import { ensureDebianBinary } from './redis-benchmark.js'

/** A Node process running under valgrind's callgrind, whose instruction count can be read over windows. */
export interface CallgrindProcess {
  child: ChildProcess
  pid: number
  /** Instructions the process executed while `work` ran (user space, every thread). */
  count(work: () => Promise<void>): Promise<number>
  /** The last window's self instructions per function (started with `profile`: JavaScript functions named). */
  functions(): Map<string, number>
  stop(): void
}

/**
 * Starts `node <script> <args>` under callgrind. V8's collector and compilers run on background threads and on
 * timers, so a plain count of Node wanders with the clock; `--single-threaded` puts them on the main thread,
 * where they run when allocation calls for them, and `--no-memory-reducer` drops the idle-time collections. A
 * window's count then depends on the work sent, not on the machine's load, which is what makes a 2% question
 * answerable on a shared VM where CPU time moves by 10-20% between runs.
 */
export function startUnderCallgrind(
  script: string,
  args: string[],
  options: {
    cwd: string
    env: NodeJS.ProcessEnv
    stdio?: 'pipe' | 'ignore'
    nodeFlags?: string[]
    /** Keep each window's dump and have V8 write its perf map, for functions(). */
    profile?: boolean
  },
): CallgrindProcess {
  const valgrind = ensureDebianBinary('/usr/bin/valgrind', 'valgrind')
  const control = ensureDebianBinary('/usr/bin/callgrind_control', 'valgrind')
  const dir = mkdtempSync(join(tmpdir(), 'heatsink-callgrind-'))
  const child = spawn(
    valgrind,
    [
      '--tool=callgrind',
      `--callgrind-out-file=${join(dir, 'cg.%p.out')}`,
      'node',
      '--single-threaded',
      '--no-memory-reducer',
      ...(options.profile === true ? ['--perf-basic-prof'] : []),
      ...(options.nodeFlags ?? []),
      script,
      ...args,
    ],
    { cwd: options.cwd, env: options.env, stdio: ['pipe', options.stdio ?? 'ignore', 'ignore'] },
  )
  const pid = child.pid as number
  const send = (command: '-z' | '-d') => execFileSync(control, [command, String(pid)], { stdio: 'ignore' })
  let lastDump: string | undefined
  return {
    child,
    pid,
    async count(work) {
      send('-z')
      await work()
      send('-d')
      const dump = latestDump(dir, pid)
      lastDump = options.profile === true ? readFileSync(dump, 'utf8') : undefined
      return summaryOf(dump)
    },
    functions() {
      if (lastDump === undefined)
        throw new Error('functions() needs a process started with profile and a window')
      return selfCostByFunction(lastDump, `/tmp/perf-${pid}.map`)
    },
    stop() {
      child.kill('SIGKILL')
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

// Each dump is written to cg.<pid>.out.<n>, n counting up.
function latestDump(dir: string, pid: number): string {
  const prefix = `cg.${pid}.out.`
  const latest = readdirSync(dir)
    .filter((name) => name.startsWith(prefix))
    .map((name) => Number(name.slice(prefix.length)))
    .reduce((a, b) => Math.max(a, b), 0)
  return join(dir, `${prefix}${latest}`)
}

// A dump's `summary:` line is the window's total; the dump is removed once read.
function summaryOf(path: string): number {
  const summary = /^summary: (\d+)/m.exec(readFileSync(path, 'utf8'))?.[1]
  rmSync(path)
  if (summary === undefined) throw new Error(`callgrind dump ${path} has no summary line`)
  return Number(summary)
}
