export { type BackendAddress, parseBackendUrl } from './backend/backend-address.js'
export { BackendAddressError, BackendLostError, ConfigError, ProtocolError, ProxyError } from './errors.js'
export { createProxy, DEFAULT_PROXY_PORT, type ProxyOptions, RespProxy } from './proxy.js'
export { ProxyStats } from './proxy-stats.js'
