#!/usr/bin/env node
// `pnpm test`: build, typecheck and lint every package (the process tests run the built entry points), run
// every vitest project, then print the one line CI reads:
// `N passed, N failed[, N skipped]`, last. Arguments after `pnpm test --` go to vitest (e.g. `--project sketch`).
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs'
import { delimiter, dirname, isAbsolute, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const reportDir = join(root, '.reports')
const reportFile = join(reportDir, 'vitest.json')

// pnpm hands `pnpm test -- a b` over as `-- a b`; vitest would read a bare `--` as the end of its options.
const vitestArgs = process.argv.slice(2)
if (vitestArgs[0] === '--') vitestArgs.shift()

const bin = join(root, 'node_modules', '.bin')
// The tools run from the root's node_modules/.bin, not through `pnpm exec`: pnpm exec puts a *relative*
// ./node_modules/.bin first on PATH, turbo then resolves pnpm to ./node_modules/.bin/pnpm and fails to spawn it
// from each package's directory. Absolute entries only also let turbo find the root's pinned pnpm when no
// global pnpm is installed.
const path = [bin, ...(process.env.PATH ?? '').split(delimiter).filter((dir) => isAbsolute(dir))].join(
  delimiter,
)

/** Runs a root-installed tool in the repo root, output streamed, and resolves with its exit code. */
function runTool(name, args) {
  return new Promise((resolve) => {
    const child = spawn(join(bin, name), args, {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, PATH: path },
    })
    child.once('error', (error) => {
      console.error(`could not run ${name}: ${error.message} (did \`pnpm install\` run?)`)
      resolve(1)
    })
    child.once('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)))
  })
}

const checks = await runTool('turbo', ['run', 'build', 'typecheck', 'lint', '--output-logs=errors-only'])
if (checks !== 0) {
  console.error(`build, typecheck or lint failed (exit code ${checks}); tests were not run`)
  process.exit(checks)
}

// A report left by an earlier run must not pass for this one.
rmSync(reportFile, { force: true })
mkdirSync(reportDir, { recursive: true })
const vitest = await runTool('vitest', [
  'run',
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${reportFile}`,
  ...vitestArgs,
])

if (!existsSync(reportFile)) {
  console.error(`vitest exited with code ${vitest} and wrote no report at ${reportFile}`)
  process.exit(vitest === 0 ? 1 : vitest)
}
let report
try {
  report = JSON.parse(readFileSync(reportFile, 'utf8'))
} catch (error) {
  console.error(`the vitest report at ${reportFile} is not JSON: ${error.message}`)
  process.exit(1)
}

const count = (field) => (Number.isInteger(report[field]) ? report[field] : 0)
const passed = count('numPassedTests')
const failed = count('numFailedTests')
const skipped = count('numPendingTests') + count('numTodoTests')

const problems = []
if (vitest !== 0) problems.push(`vitest exited with code ${vitest}`)
if (failed > 0) problems.push(`${failed} failed`)
if (passed + failed === 0) problems.push('no tests ran')
if (problems.length > 0) console.error(`test run failed: ${problems.join('; ')}`)

console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`)
process.exit(problems.length > 0 ? 1 : 0)
