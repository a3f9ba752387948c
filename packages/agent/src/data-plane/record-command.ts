import { type CommandSpec, commandForm } from '@heatsink/commands'
import type { WindowRecorder } from '@heatsink/sketch'
import type { HotKey } from '../registry/hot-key.js'

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

/**
 * recordCommand for a read of the registered key `hot`: through the recorder's candidate for it, kept on the
 * HotKey while the key is pinned (registered keys are), so that an L1 hit counts with no lookup by name.
 */
export function recordRegistered(
  recorder: WindowRecorder,
  spec: CommandSpec,
  args: readonly unknown[] | undefined,
  name: string,
  hot: HotKey,
): number {
  const candidate = hot.candidate
  if (candidate?.pinned !== true) hot.candidate = recorder.pinnedCandidate(name)
  else if (spec.form !== 0) return recorder.recordPinned(candidate, false, spec.form)
  return recordCommand(recorder, spec, args, name, false)
}
