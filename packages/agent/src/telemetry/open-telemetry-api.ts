import { createRequire } from 'node:module'
import type * as OpenTelemetryApi from '@opentelemetry/api'

/**
 * `@opentelemetry/api` when the application has it installed, else undefined. It is an optional peer
 * dependency: one copy shared with the application's SDK (the API hands out the SDK it registered only to
 * copies of a compatible version), and nothing to install for applications without OpenTelemetry. Loaded with
 * require, synchronously, so that the agent's module stays free of top-level await (and loadable by require).
 */
export const openTelemetry: typeof OpenTelemetryApi | undefined = (() => {
  try {
    return createRequire(import.meta.url)('@opentelemetry/api') as typeof OpenTelemetryApi
  } catch {
    return undefined
  }
})()

export type { OpenTelemetryApi }
