import { createRequire } from 'node:module'

// cluster-key-slot (ioredis's own CRC16 for Redis Cluster) is CommonJS without types: loaded here and typed once,
// so that no ambient declaration has to follow the proxy's source into other packages' type checks.
const require = createRequire(import.meta.url)

/** The slot (0-16383) of a key, honouring {hash tags}; a Buffer is hashed as its bytes. */
export const calculateSlot: (key: string | Buffer) => number = require('cluster-key-slot')
