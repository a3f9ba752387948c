import type { CommandSpec } from '@heatsink/commands'
import type { BackendPool } from '../backend/backend-pool.js'
import type { ReplySink } from '../backend/reply-sink.js'
import type { ClusterBackend } from '../cluster/cluster-backend.js'
import { CROSSSLOT, MergeSinks, slotsOf, splitBySlot } from '../cluster/cross-slot.js'
import { fanOutOf, scanEveryMaster, sendToEveryMaster } from '../cluster/fan-out.js'
import { RedirectSink } from '../cluster/redirect-sink.js'

/** The backend: a standalone Redis's connections, and the Cluster's when it is one. */
export interface SharedBackend {
  readonly pool: BackendPool
  readonly cluster: ClusterBackend | undefined
}

/**
 * Sends a request on the shared connections: on a standalone Redis the client's one; on a Cluster the one to the
 * master of the keys' slot, following redirects. A multi-key command over several slots is split by slot and
 * its replies merged (MGET, MSET, DEL, EXISTS, UNLINK, TOUCH), any other gets CROSSSLOT; a keyless command about
 * the whole keyspace goes to every master, other keyless commands to the master of slot 0. `sharedIndex` picks
 * which of the shared connections (per master, on a Cluster) carries the client's requests; `resp3` that they
 * speak the client's protocol.
 */
export function sendShared(
  backend: SharedBackend,
  sharedIndex: number,
  resp3: boolean,
  spec: CommandSpec | undefined,
  name: string,
  args: Buffer[],
  bytes: Buffer,
  sink: ReplySink,
): void {
  const cluster = backend.cluster
  if (cluster === undefined) {
    backend.pool.send(sharedIndex, resp3, bytes, sink)
    return
  }
  const slots = slotsOf(spec, args)
  if (slots.length === 0) {
    // KEYS, SCAN, DBSIZE, FLUSHALL, SCRIPT LOAD...: about the whole keyspace, so every master answers.
    const fanOut = fanOutOf(name, args)
    if (fanOut === 'scan') {
      scanEveryMaster(cluster, args, sink, sharedIndex, resp3)
      return
    }
    if (fanOut !== undefined) {
      sendToEveryMaster(cluster, fanOut, bytes, sink, sharedIndex, resp3)
      return
    }
  }
  if (slots.length <= 1) {
    const slot = slots[0] ?? 0
    cluster
      .shared(slot, sharedIndex, resp3)
      .send(bytes, new RedirectSink(sink, bytes, cluster, slot, sharedIndex, resp3))
    return
  }
  const parts = splitBySlot(name, args)
  if (parts === undefined) {
    sink.data(CROSSSLOT)
    sink.end()
    return
  }
  const merge = new MergeSinks(name, parts, sink, resp3)
  parts.forEach((part, i) => {
    cluster
      .shared(part.slot, sharedIndex, resp3)
      .send(
        part.request,
        new RedirectSink(merge.part(i), part.request, cluster, part.slot, sharedIndex, resp3),
      )
  })
}
