/** The clients a compat project can put under test; the project's `provide` names one. */
export type ClientName = 'ioredis' | 'agent' | 'agent-local-cache' | 'proxy'

declare module 'vitest' {
  export interface ProvidedContext {
    /** Which client the ioredis shim (ioredis/lib/) hands the vendored tests. */
    compatClient: ClientName
    /** Port of this project's private redis-server on 127.0.0.1, started by global-setup.ts. */
    compatRedisPort: number
  }
}
