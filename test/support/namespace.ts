import { randomBytes } from 'node:crypto'

/** A fresh Heatsink namespace (and key prefix) for one test: `hs-test-` and 12 random hex digits. */
export function testNamespace(): string {
  return `hs-test-${randomBytes(6).toString('hex')}`
}

/** A fresh Postgres schema name for one test: `t_` and 12 random hex digits, valid unquoted. */
export function testSchemaName(): string {
  return `t_${randomBytes(6).toString('hex')}`
}
