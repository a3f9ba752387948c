/** A test asked for Redis or Postgres but no URL was published: the global setup did not run for it. */
export class TestServiceMissingError extends Error {
  override readonly name = 'TestServiceMissingError'
  readonly code = 'E_TEST_SERVICE_MISSING'
  /** The environment variable that was empty. */
  readonly variable: string

  constructor(variable: string) {
    super(
      [
        `${variable} is not set, so the Heatsink global setup (test/support/global-setup.ts) did not run for this test.`,
        "Build this package's vitest.config.ts with heatsinkProject() from @heatsink/test/vitest, and run the tests",
        `through vitest (pnpm test at the repo root, or pnpm exec vitest run --project <name>); or set ${variable} yourself.`,
      ].join('\n'),
    )
    this.variable = variable
  }
}
