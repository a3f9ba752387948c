import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { REPO_ROOT } from '@heatsink/test'

/** Every fenced code block in `language` of a package's README.md, in order, exactly as a reader copies them. */
export function readmeExamples(packageDir: string, language: string): string[] {
  const readme = readFileSync(join(REPO_ROOT, packageDir, 'README.md'), 'utf8')
  const blocks = [...readme.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map(
    (match) => match[1] ?? '',
  )
  if (blocks.length === 0) throw new Error(`${packageDir}/README.md has no \`\`\`${language} block`)
  return blocks
}
