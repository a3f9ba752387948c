import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import fastifyStatic from '@fastify/static'
import type { FastifyPluginAsync } from 'fastify'
import { replyError } from './reply-error.js'

/** Where `pnpm build` puts the dashboard (packages/dashboard, built by Vite); null when it cannot be found. */
export function dashboardDir(): string | null {
  try {
    const manifest = createRequire(import.meta.url).resolve('@heatsink/dashboard/package.json')
    const dir = join(dirname(manifest), 'dist')
    return existsSync(join(dir, 'index.html')) ? dir : null
  } catch {
    return null
  }
}

/**
 * The dashboard at `/`: the files Vite built, served as they are (no build at start-up, nothing fetched from
 * the internet). Routes exist only for the files present at start, so every other path keeps the API's JSON 404.
 * Without a build, `/` says how to make one instead of failing obscurely.
 */
export const dashboardAssets: FastifyPluginAsync<{ dir: string | null }> = async (app, { dir }) => {
  if (dir === null) {
    app.get('/', { schema: { hide: true } }, async (_request, reply) =>
      replyError(reply, 503, 'the dashboard is not built: run `pnpm build` (it builds packages/dashboard)'),
    )
    return
  }
  await app.register(fastifyStatic, {
    root: dir,
    prefix: '/',
    wildcard: false,
    // Swagger UI registers its own copy of the plugin for /docs; only one may add reply.sendFile.
    decorateReply: false,
    // Vite names assets by content hash, so they may be cached for good; index.html must be re-read each time.
    setHeaders: (response, path) => {
      response.setHeader(
        'cache-control',
        path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
      )
    },
  })
}
