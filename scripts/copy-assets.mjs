// Copies the non-TypeScript files a package loads at run time (Lua scripts, SQL migrations) from src/ to dist/,
// keeping their paths, because tsc only emits what it compiles. Linked directories are followed and their files
// copied as files (the aggregator's src/migrations links to the top-level migrations/).
import { cpSync, existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

const ASSET = /\.(lua|sql)$/
function copy(from, to) {
  if (!existsSync(from)) return
  for (const name of readdirSync(from)) {
    const source = join(from, name)
    const target = join(to, name)
    if (statSync(source).isDirectory()) copy(source, target)
    else if (ASSET.test(name)) cpSync(source, target)
  }
}
copy('src', 'dist')
