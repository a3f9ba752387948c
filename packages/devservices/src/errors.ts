/** The services this package finds or starts. */
export type ServiceName = 'redis' | 'postgres' | 'redis-cluster' | 'redis-sentinel'

/** Base of every error this package throws; `code` is stable across versions. */
export abstract class DevServicesError extends Error {
  abstract readonly code: string
  /** Which service was being found or started. */
  readonly service: ServiceName

  constructor(service: ServiceName, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.service = service
  }
}

/** No server answered at the URL and none could be started here; the message says how to get one. */
export class ServiceUnavailableError extends DevServicesError {
  override readonly name = 'ServiceUnavailableError'
  override readonly code = 'E_SERVICE_UNAVAILABLE'
  /** The URL that was tried, if any. */
  readonly url: string | undefined

  constructor(service: ServiceName, url: string | undefined, message: string, options?: { cause?: unknown }) {
    super(service, message, options)
    this.url = url
  }
}

/** A server binary was found but the private server it should run did not come up; `output` is its log tail. */
export class ServiceStartError extends DevServicesError {
  override readonly name = 'ServiceStartError'
  override readonly code = 'E_SERVICE_START_FAILED'
  /** The command line that failed. */
  readonly command: string
  /** The last lines the command printed, for diagnosis. */
  readonly output: string

  constructor(
    service: ServiceName,
    command: string,
    output: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    const tail = output.trim() === '' ? '' : `\n--- output ---\n${output.trimEnd()}`
    super(service, `could not start a private ${service}: ${reason}\ncommand: ${command}${tail}`, options)
    this.command = command
    this.output = output
  }
}
