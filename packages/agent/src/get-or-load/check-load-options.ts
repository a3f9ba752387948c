import { InvalidAgentOptionError, UnknownAgentOptionError } from '../errors.js'
import type { LoadOptions } from './loader.js'

const LOAD_OPTION_NAMES = [
  'ttlSeconds',
  'staleSeconds',
  'negativeTtlSeconds',
  'maxWaitMs',
  'lock',
  'xfetchBeta',
  'jitter',
  'signal',
] as const satisfies ReadonlyArray<keyof LoadOptions>
const LOAD_OPTIONS = new Set<string>(LOAD_OPTION_NAMES)
// Every option LoadOptions declares is listed above: one added there and not here fails the build.
const everyLoadOptionListed: Exclude<keyof LoadOptions, (typeof LOAD_OPTION_NAMES)[number]> extends never
  ? true
  : false = true
void everyLoadOptionListed

/**
 * Checks the keys of getOrLoad's options, named `getOrLoad.<option>`; their values are checked where they are
 * used (@heatsink/stampede's resolveLoadOptions). A loop over a few keys: getOrLoad runs it on every call.
 */
export function checkLoadOptions(options: LoadOptions): void {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidAgentOptionError('getOrLoad options', 'must be an object such as { ttlSeconds: 60 }')
  }
  for (const key in options) {
    if (!LOAD_OPTIONS.has(key)) throw new UnknownAgentOptionError(`getOrLoad.${key}`, key, LOAD_OPTION_NAMES)
  }
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    throw new InvalidAgentOptionError('getOrLoad.signal', 'must be an AbortSignal')
  }
}
