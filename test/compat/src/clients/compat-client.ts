import type { Cluster, Command, Redis } from 'ioredis'

/** What the ioredis shim (ioredis/lib/) hands the vendored tests. */
export interface CompatClient {
  /** The class the tests construct; without a port, URL or socket it connects to the private server. */
  readonly Redis: typeof Redis
  readonly Cluster: typeof Cluster
  /** ioredis's Command, whose static transformers a test changes: the one the client under test runs on. */
  readonly Command: typeof Command
}
