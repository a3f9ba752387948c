# syntax=docker/dockerfile:1
# The Heatsink aggregator (the control plane). Build from the repository root:
#   docker build -f deploy/aggregator.Dockerfile -t heatsink-aggregator .
# The last stage is the aggregator. `--target demo-agent` builds the quickstart's traffic agent instead, which
# deploy/compose.yaml runs beside the aggregators as the demo's traffic.

# The workspace, built. Dependencies are fetched before the source is copied, so a change to the code reuses the
# fetched packages: `pnpm fetch` needs nothing but the lockfile, and the install after the copy is offline.
# turbo runs from node_modules/.bin: under `pnpm exec` a relative ./node_modules/.bin leads PATH, and turbo then
# fails to spawn pnpm from each package's directory.
FROM node:24-bookworm-slim AS build
RUN npm install -g pnpm@10.34.9
WORKDIR /workspace
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
RUN pnpm fetch
COPY . .
RUN pnpm install --offline --frozen-lockfile \
 && node_modules/.bin/turbo run build --filter=@heatsink/aggregator... --filter=@heatsink/quickstart...

# The aggregator's package as a user would install it: dist/ (with the SQL migrations in dist/migrations) and its
# production dependencies only, at the lockfile's versions. pnpm 10 deploys from the lockfile only with
# inject-workspace-packages; set for this command alone, it leaves the workspace's own links as they are
# (`--legacy` would resolve every version again, ignoring the lockfile). Writable by root alone, whatever the
# build's umask.
FROM build AS aggregator-package
RUN pnpm --config.inject-workspace-packages=true --filter @heatsink/aggregator deploy --prod --offline /out \
 && chmod -R go-w /out

FROM build AS demo-agent-package
RUN pnpm --config.inject-workspace-packages=true --filter @heatsink/quickstart deploy --prod --offline /out \
 && chmod -R go-w /out

# The demo's traffic agent (deploy/compose.yaml): plain ioredis code through Heatsink's client.
FROM node:24-bookworm-slim AS demo-agent
ENV NODE_ENV=production
WORKDIR /app
COPY --from=demo-agent-package /out /app
USER node
CMD ["node", "dist/traffic-agent.js"]

# The aggregator: no compilers, test tools or package manager. The code stays owned by root and writable by root
# alone (COPY without --chown), so the process running as `node` cannot change what it runs.
FROM node:24-bookworm-slim AS aggregator
ENV NODE_ENV=production PORT=8080
WORKDIR /app
COPY --from=aggregator-package /out /app
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/main.js"]
