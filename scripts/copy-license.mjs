// `prepack` of every published package: copies the repository's LICENSE into the package's directory, because
// npm and pnpm pack only a package's own directory and the license text lives once, at the root.
import { copyFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(fileURLToPath(import.meta.url), '..', '..')
copyFileSync(join(root, 'LICENSE'), join(process.cwd(), 'LICENSE'))
