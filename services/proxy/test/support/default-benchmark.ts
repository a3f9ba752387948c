import { expect } from 'vitest'
import { ensureDebianPackage } from './debian-package.js'
import { runProgram } from './run-program.js'

/**
 * Runs redis-benchmark's default tests against `port` (2,000 requests each, 20 clients, with `extra` options such
 * as -P 16), asserts that it reported no error and exited 0, and returns the rows of its CSV: test name, then rps.
 */
export async function runDefaultBenchmark(port: number, extra: string[]): Promise<string[][]> {
  const benchmark = ensureDebianPackage('/usr/bin/redis-benchmark', 'redis-tools')
  const args = ['-p', String(port), '-n', '2000', '-c', '20', '--csv', ...extra]
  const { stdout, stderr, code } = await runProgram(benchmark, args)
  expect(stderr).not.toMatch(/error/i)
  expect(code).toBe(0)
  const rows = stdout
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.split('","').map((cell) => cell.replaceAll('"', '')))
  for (const row of rows) expect(Number(row[1])).toBeGreaterThan(0)
  return rows
}
