import type { Redis } from 'ioredis'
import { InvalidAgentOptionError } from '../errors.js'

/**
 * Settles once the control Redis has said what it is: rejects with InvalidAgentOptionError('control') when a
 * connection to one server (a URL, an ioredis Redis) reached a node of a Redis Cluster. Such a node answers the keys of its own slots and MOVED for the others, so an agent on
 * it could become ready and then lose reports and registry reads; ready() rejects with this at once instead. A
 * connection that cannot ask settles without a verdict: reaching Redis is ready()'s other business.
 */
export async function checkStandaloneControl(control: Redis): Promise<void> {
  const info = await control.info('cluster').catch(() => '')
  if (/^cluster_enabled:1/m.test(info)) {
    throw new InvalidAgentOptionError(
      'control',
      'names a node of a Redis Cluster (cluster_enabled:1); give an ioredis Cluster of it as control instead',
    )
  }
}
