// The slot every command on a Cluster backend is routed by. Heatsink's own CRC16 rather than cluster-key-slot
// (ioredis' own): measured faster on the Buffers the proxy hashes, and it agrees with Redis on keys such as
// `foo{}{bar}` where that library does not (packages/protocol/src/cluster-slot.ts; packages/bench cluster-slot).
export { redisClusterSlot as calculateSlot } from '@heatsink/protocol'
