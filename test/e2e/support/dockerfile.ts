// A Dockerfile read into its stages, for tests that check an image's recipe on machines with no Docker daemon.
// Enough of the syntax for deploy/*.Dockerfile: comments, line continuations, `FROM image [AS name]`.

/** One instruction: `COPY --from=build /out /app` is { keyword: 'COPY', args: '--from=build /out /app' }. */
export interface DockerInstruction {
  readonly keyword: string
  readonly args: string
}

/** One build stage: its base image, its name if it has one, and its instructions after FROM. */
export interface DockerStage {
  readonly from: string
  readonly name: string | undefined
  readonly instructions: readonly DockerInstruction[]
}

/** Splits a Dockerfile into its stages, in order. */
export function parseDockerfile(text: string): DockerStage[] {
  const stages: Array<{ from: string; name: string | undefined; instructions: DockerInstruction[] }> = []
  for (const line of logicalLines(text)) {
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/s.exec(line) ?? []
    if (keyword.toUpperCase() === 'FROM') {
      const [from = '', as, name] = args.split(/\s+/)
      stages.push({ from, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] })
      continue
    }
    const stage = stages.at(-1)
    if (stage === undefined) continue // ARG before the first FROM
    stage.instructions.push({ keyword: keyword.toUpperCase(), args })
  }
  return stages
}

/** The stage called `name`; throws naming the stages there are. */
export function stageNamed(stages: readonly DockerStage[], name: string): DockerStage {
  const stage = stages.find((candidate) => candidate.name === name)
  if (stage === undefined) {
    throw new Error(`no stage ${name}; stages: ${stages.map((s) => s.name ?? s.from).join(', ')}`)
  }
  return stage
}

/** The arguments of a JSON (exec form) instruction such as `CMD ["node", "dist/main.js"]`. */
export function execForm(instruction: DockerInstruction | undefined): string[] {
  if (instruction === undefined) throw new Error('no such instruction')
  return JSON.parse(instruction.args) as string[]
}

/** Instructions with their continuation lines joined and comments and blank lines dropped. */
function logicalLines(text: string): string[] {
  const lines: string[] = []
  let pending = ''
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    // A comment line inside a continued instruction is dropped without ending it, as Docker does.
    if (line.startsWith('#')) continue
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `
      continue
    }
    const whole = `${pending}${line}`.trim()
    pending = ''
    if (whole !== '') lines.push(whole)
  }
  if (pending.trim() !== '') lines.push(pending.trim())
  return lines
}
