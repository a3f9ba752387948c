export { RedisScriptError, ScriptFileNameError, ScriptKeyCountError } from './errors.js'
export { acquireLease, claimLease, releaseLease, renewLease } from './lease.js'
export { RedisScript, type ScriptArgument, type ScriptTarget } from './redis-script.js'
