import type { RedisSentinel } from '@heatsink/devservices'
import { Redis } from 'ioredis'

/** A failover as the newcomer sees it: where the primary was, where it went, and how long the switch took. */
export interface FailoverResult {
  readonly from: string
  readonly to: string
  /** From SENTINEL FAILOVER sent to the first `+switch-master` announced. */
  readonly switchMs: number
}

const SWITCH_TIMEOUT_MS = 30_000

/**
 * Sends SENTINEL FAILOVER and resolves when a sentinel announces `+switch-master` (the moment every Heatsink
 * component is told of the new primary). The listeners subscribe first, so the announcement cannot be missed.
 */
export async function failOver(deployment: RedisSentinel): Promise<FailoverResult> {
  const listeners = deployment.sentinels.map(
    (address) => new Redis({ ...address, lazyConnect: true, maxRetriesPerRequest: 1 }),
  )
  try {
    await Promise.all(listeners.map((listener) => listener.connect()))
    await Promise.all(listeners.map((listener) => listener.subscribe('+switch-master')))
    const announced = new Promise<string[]>((resolve, reject) => {
      // "<master-name> <old-ip> <old-port> <new-ip> <new-port>"
      for (const listener of listeners)
        listener.on('message', (_channel, message: string) => resolve(message.split(' ')))
      setTimeout(
        () => reject(new Error(`no sentinel announced +switch-master within ${SWITCH_TIMEOUT_MS / 1000} s`)),
        SWITCH_TIMEOUT_MS,
      ).unref()
    })
    const sentAt = performance.now()
    const admin = listeners[0]?.duplicate()
    if (admin === undefined) throw new Error('the deployment has no sentinel')
    await admin.call('SENTINEL', 'FAILOVER', deployment.masterName).finally(() => admin.disconnect())
    const [, oldHost, oldPort, newHost, newPort] = await announced
    return {
      from: `${oldHost}:${oldPort}`,
      to: `${newHost}:${newPort}`,
      switchMs: performance.now() - sentAt,
    }
  } finally {
    for (const listener of listeners) listener.disconnect()
  }
}
