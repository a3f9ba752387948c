// cluster-key-slot (ioredis's CRC16 of Redis Cluster) ships no types: the one function the proxy calls.
declare module 'cluster-key-slot' {
  /** The slot (0-16383) of a key, honouring {hash tags}; a Buffer is hashed as its bytes. */
  export default function calculateSlot(key: string | Buffer): number
}
