import { TestServiceMissingError } from './errors.js'

/** The environment variables the global setup publishes and the helpers read. */
export type ServiceVariable = 'REDIS_URL' | 'DATABASE_URL'

/** The URL the global setup published in `variable`; throws TestServiceMissingError when it is missing. */
export function requireServiceUrl(variable: ServiceVariable): string {
  const url = process.env[variable]
  if (url === undefined || url === '') throw new TestServiceMissingError(variable)
  return url
}
