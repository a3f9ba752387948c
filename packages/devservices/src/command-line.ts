/** A command and its arguments as one shell-readable line, for error messages a reader can paste. */
export function commandLine(command: string, args: readonly string[]): string {
  return [command, ...args].map(quote).join(' ')
}

/** One argument quoted for a POSIX shell, left bare when it needs no quoting. */
export function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`
}
