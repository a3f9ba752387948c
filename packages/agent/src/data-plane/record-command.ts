import { type CommandSpec, commandForm } from '@heatsink/commands'
import type { WindowRecorder } from '@heatsink/sketch'

/**
 * Records one request for `name` with its command form (CommandForm), and returns record()'s answer. The spec's
 * own form rides along at no cost; a command whose options decide its form (SET, ZADD, ZRANGE: the spec's form
 * is 0) has its arguments (`args`, the key first; undefined: the key alone) read only once the key is tracked,
 * so cold keys pay nothing.
 */
export function recordCommand(
  recorder: WindowRecorder,
  spec: CommandSpec,
  args: readonly unknown[] | undefined,
  name: string,
  write: boolean,
): number {
  const count = recorder.record(name, write, spec.form)
  if (spec.form === 0 && count !== 0) recorder.recordForms(name, commandForm(spec, args ?? [name]))
  return count
}
