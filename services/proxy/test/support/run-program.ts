import { spawn } from 'node:child_process'

/** What a program printed and how it ended. */
export interface ProgramResult {
  stdout: string
  stderr: string
  code: number | null
}

/**
 * Runs a program to its end without blocking the event loop (the proxy under test runs on it), feeding it
 * `input` on stdin; rejects when it runs longer than `timeoutMs`.
 */
export function runProgram(
  path: string,
  args: string[],
  input = '',
  timeoutMs = 60_000,
): Promise<ProgramResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(path, args, { stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text
    })
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr += text
    })
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(
        new Error(
          `${path} ${args.join(' ')} ran longer than ${timeoutMs} ms; stderr: ${stderr.slice(-2000)}`,
        ),
      )
    }, timeoutMs)
    child.on('error', (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ stdout, stderr, code })
    })
    child.stdin.end(input)
  })
}
