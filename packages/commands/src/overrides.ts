import type { CommandSpec } from './command-spec.js'

/** The fields of a spec that a row may set instead of deriving them from Redis' flags. */
export type SpecOverride = Partial<Pick<CommandSpec, 'access' | 'blocking' | 'pubsub' | 'admin' | 'noScript'>>

/**
 * Where the flags of @ioredis/commands (which are Redis' own, from `COMMAND INFO`) mislead about what a call
 * does. A container command (CONFIG, OBJECT, XGROUP...) has no flags at all in the data: Redis flags each
 * subcommand instead, so its row says what its subcommands have in common.
 */
export const OVERRIDES: Readonly<Record<string, SpecOverride>> = {
  // Redis 7 takes a script's effects from the script's own shebang flags, so EVAL, EVALSHA and FCALL carry
  // neither 'write' nor 'readonly'. Whatever the script does, it may write its keys.
  eval: { access: 'write' },
  evalsha: { access: 'write' },
  fcall: { access: 'write' },

  // Holds the connection until N replicas acknowledge or the timeout passes, yet has no 'blocking' flag.
  wait: { blocking: true },
  // Flagged 'blocking' for every call, but block only with a BLOCK option: isBlocking() reads the args.
  xread: { blocking: false },
  xreadgroup: { blocking: false },

  // Containers whose keyed subcommands (OBJECT ENCODING/FREQ/IDLETIME/REFCOUNT, MEMORY USAGE, XINFO STREAM/
  // GROUPS/CONSUMERS) Redis flags 'readonly': they read a key, though only its metadata.
  object: { access: 'read' },
  memory: { access: 'read' },
  xinfo: { access: 'read' },
  // Every keyed XGROUP subcommand (CREATE, SETID, DESTROY, CREATECONSUMER, DELCONSUMER) is a write.
  xgroup: { access: 'write' },

  // Every PUBSUB subcommand (CHANNELS, NUMSUB, SHARDCHANNELS...) is flagged 'pubsub'.
  pubsub: { pubsub: true },

  // Every subcommand but HELP (and ACL's harmless WHOAMI, CAT, GENPASS) is flagged 'admin' and 'noscript'.
  acl: { admin: true, noScript: true },
  config: { admin: true, noScript: true },
  latency: { admin: true, noScript: true },
  module: { admin: true, noScript: true },
  // SLOWLOG GET/LEN/RESET are 'admin' but allowed in scripts.
  slowlog: { admin: true },

  // No CLIENT or CLUSTER row marks them admin: clients send CLIENT SETNAME and CLUSTER SLOTS themselves, and
  // only some subcommands (CLIENT KILL, CLUSTER MEET) are. CLIENT's subcommands are all 'noscript'.
  client: { noScript: true },
  // Every SCRIPT and FUNCTION subcommand is 'noscript': a script cannot load or flush scripts.
  script: { noScript: true },
  function: { noScript: true },
}
