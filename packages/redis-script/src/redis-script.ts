import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { basename } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type ChainableCommander, type Cluster, Command, type Redis } from 'ioredis'
import { ScriptFileNameError, ScriptKeyCountError } from './errors.js'

/** One argument of a script, as ioredis sends it. */
export type ScriptArgument = string | number | Buffer

/** Where a script can run: a client, a Cluster (routed by the script's first key), or a pipeline of either. */
export type ScriptTarget = Redis | Cluster | ChainableCommander

interface CommandSender {
  sendCommand(command: Command): unknown
}

// `<camelName>-<numberOfKeys>.lua`, or `<camelName>.lua` for a script that takes any number of keys.
const SCRIPT_FILE = /^([a-z][A-Za-z0-9]*)(?:-(\d+))?\.lua$/

/**
 * A Lua script that runs on any client it is handed, by EVALSHA, with EVAL sent the first time on each
 * connection and again whenever Redis answers NOSCRIPT (a restart, a failover, SCRIPT FLUSH), as ioredis's own
 * scripts do.
 *
 * It exists instead of ioredis's defineCommand because defineCommand writes two methods onto the client for
 * every script, and every pipeline, including each one enableAutoPipelining builds behind a plain GET, copies
 * them all again. With the 23 scripts Heatsink would put on an application's client that pushed the client out
 * of V8's fast-property mode and cost every command on it, the application's own included, 3-4% of throughput
 * (measured with 23 scripts defined on a plain client). A RedisScript adds nothing to the clients it runs on.
 */
export class RedisScript {
  readonly sha: string
  readonly #ScriptCommand: typeof Command

  /**
   * @param name what errors and logs call the script
   * @param numberOfKeys how many KEYS it takes; undefined for any number, counted at each call
   */
  constructor(
    readonly name: string,
    readonly lua: string,
    readonly numberOfKeys?: number,
  ) {
    const sha = createHash('sha1').update(lua).digest('hex')
    this.sha = sha
    // The connections (sockets) known to hold the script; a NOSCRIPT reply removes one.
    const loadedOn = new WeakSet<object>()
    this.#ScriptCommand = class ScriptCommand extends Command {
      override toWritable(socket: object): string | Buffer {
        const reject = this.reject
        this.reject = (error: Error) => {
          if (error.message.includes('NOSCRIPT')) loadedOn.delete(socket)
          reject.call(this, error)
        }
        if (!loadedOn.has(socket)) {
          loadedOn.add(socket)
          this.name = 'eval'
          this.args[0] = lua
        } else if (this.name === 'eval') {
          this.name = 'evalsha'
          this.args[0] = sha
        }
        return super.toWritable(socket)
      }

      // An ioredis 6 client calls this on every command it sends; ioredis 5's Command lacks it, which matters
      // when this package resolved ioredis 5 and runs on an application's ioredis 6 client. Script replies take
      // no reply transformer, so the context changes nothing for them.
      setReplyContext(): void {}
    }
  }

  /** Reads `<camelName>-<numberOfKeys>.lua` (or `<camelName>.lua`, any number of keys) from a file URL. */
  static fromFile(file: URL): RedisScript {
    const name = basename(fileURLToPath(file))
    const match = SCRIPT_FILE.exec(name)
    if (match === null) throw new ScriptFileNameError(name)
    const numberOfKeys = match[2] === undefined ? undefined : Number(match[2])
    return new RedisScript(match[1] as string, readFileSync(file, 'utf8'), numberOfKeys)
  }

  /**
   * Runs the script with `keys` as KEYS and `args` as ARGV; resolves to its reply. On a pipeline the reply is
   * also in exec()'s results, in the order the script was queued. On a Cluster every key must share a slot.
   * Not for MULTI: inside a transaction a NOSCRIPT arrives with EXEC, too late to resend; make the transaction
   * one script instead. Throws ScriptKeyCountError at once when the keys do not match numberOfKeys.
   */
  run<Reply = unknown>(
    target: ScriptTarget,
    keys: readonly ScriptArgument[],
    args: readonly ScriptArgument[] = [],
  ): Promise<Reply> {
    if (this.numberOfKeys !== undefined && keys.length !== this.numberOfKeys) {
      throw new ScriptKeyCountError(this.name, this.numberOfKeys, keys.length)
    }
    const ScriptCommand = this.#ScriptCommand
    const commandArgs = [this.sha, keys.length, ...keys, ...args]
    const command = new ScriptCommand('evalsha', commandArgs, { replyEncoding: 'utf8' })
    const sender = target as unknown as CommandSender & { isPipeline?: boolean; redis?: CommandSender }
    command.promise = command.promise.catch((error: Error) => {
      if (!error.message.includes('NOSCRIPT')) throw error
      // The connection lost the script: send it again, as EVAL this time, outside any pipeline.
      const again = new ScriptCommand('evalsha', commandArgs, { replyEncoding: 'utf8' })
      const client = sender.isPipeline === true && sender.redis !== undefined ? sender.redis : sender
      return client.sendCommand(again) as Promise<unknown>
    })
    sender.sendCommand(command)
    return command.promise as Promise<Reply>
  }
}
