/** Every error of the proxy has a stable code and keeps its cause. */
export class ProxyError extends Error {
  readonly code: string

  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = new.target.name
    this.code = code
  }
}

/**
 * A request Redis would refuse as unparseable; the client gets `-ERR Protocol error: <message>` and its
 * connection is closed (Redis does the same), other clients are unaffected.
 */
export class ProtocolError extends ProxyError {
  constructor(message: string) {
    super('E_PROTOCOL', message)
  }
}

/** The proxy's configuration from the environment is invalid; the message names every bad variable. */
export class ConfigError extends ProxyError {
  constructor(message: string) {
    super('E_CONFIG', message)
  }
}

/** A backend address that is not a redis:// or rediss:// URL the proxy can use. */
export class BackendAddressError extends ProxyError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_BACKEND_ADDRESS', message, options)
  }
}

/** A backend connection closed or failed with requests in flight; each of them is answered with this. */
export class BackendLostError extends ProxyError {
  constructor(message: string, options?: ErrorOptions) {
    super('E_BACKEND_LOST', message, options)
  }
}

/**
 * A backend connection that failed before it connected (the server is down): its requests never reached Redis,
 * so a Cluster request may be sent again once the slot's new master is known.
 */
export class BackendUnreachableError extends BackendLostError {}
