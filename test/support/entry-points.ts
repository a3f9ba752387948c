import { fileURLToPath } from 'node:url'

/** The repository root: where the container image's working directory mirrors. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url))

/**
 * The aggregator's start command, run from the repository root. The container image runs exactly this (a test
 * checks deploy/aggregator.Dockerfile's CMD against it), and the process test runs it too.
 */
export const AGGREGATOR_COMMAND = ['node', 'services/aggregator/dist/main.js'] as const
