export { RedisScriptError, ScriptFileNameError, ScriptKeyCountError } from './errors.js'
export { RedisScript, type ScriptArgument, type ScriptTarget } from './redis-script.js'
