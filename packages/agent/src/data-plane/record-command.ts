import { type CommandSpec, commandForm } from '@heatsink/commands'
import type { WindowRecorder } from '@heatsink/sketch'
import type { HotKey } from '../registry/hot-key.js'

/**
 * Records one request for `name` with its command form (CommandForm), and returns record()'s answer. The spec's
 * own form rides along at no cost; a command whose options decide its form (SET, ZADD, ZRANGE: the spec's form
 * is 0) has its arguments (`args`, the key first; undefined: the key alone) read on every request: the recorder
 * counts a key that is not hot in a batch, and a form it was not given there would be missing from the key's
 * forms, which decide whether the key may be split.
 */
export function recordCommand(
  recorder: WindowRecorder,
  spec: CommandSpec,
  args: readonly unknown[] | undefined,
  name: string,
  write: boolean,
): number {
  return recorder.record(name, write, formOf(spec, args, name))
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
  else return recorder.recordPinned(candidate, false, formOf(spec, args, name))
  return recordCommand(recorder, spec, args, name, false)
}

function formOf(spec: CommandSpec, args: readonly unknown[] | undefined, name: string): number {
  return spec.form !== 0 ? spec.form : commandForm(spec, args ?? [name])
}
