import { Cluster, Command, Redis as IORedis, type RedisOptions } from 'ioredis'
import { type DefaultServer, withDefaultServer } from '../private-server.js'
import type { CompatClient } from './compat-client.js'

/** Plain ioredis: the baseline every other client is measured against. */
export function ioredisClient(server: DefaultServer): CompatClient {
  class Redis extends IORedis {
    constructor(...args: unknown[]) {
      super(...(withDefaultServer(args, server) as [RedisOptions]))
    }
  }
  return { Redis, Cluster, Command }
}
