import { fileURLToPath } from 'node:url'

/** The repository root. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url))

/**
 * The aggregator's start command, run from the repository root, as the process tests run it. The container image
 * runs the same entry from the deployed package's own directory (`node dist/main.js`; test/e2e/images.test.ts).
 */
export const AGGREGATOR_COMMAND = ['node', 'services/aggregator/dist/main.js'] as const
