# syntax=docker/dockerfile:1
# The Heatsink proxy: a RESP proxy in front of Redis for clients in any language. Build from the repository root:
#   docker build -f deploy/proxy.Dockerfile -t heatsink-proxy .

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
 && node_modules/.bin/turbo run build --filter=@heatsink/proxy...

# The proxy's package as a user would install it: dist/ and its production dependencies only, at the lockfile's
# versions. pnpm 10 deploys from the lockfile only with inject-workspace-packages; set for this command alone, it
# leaves the workspace's own links as they are (`--legacy` would resolve every version again). Writable by root
# alone, whatever the build's umask.
FROM build AS proxy-package
RUN pnpm --config.inject-workspace-packages=true --filter @heatsink/proxy deploy --prod --offline /out \
 && chmod -R go-w /out

# The proxy: no compilers, test tools or package manager. The code stays owned by root and writable by root alone
# (COPY without --chown), so the process running as `node` cannot change what it runs.
FROM node:24-bookworm-slim AS proxy
ENV NODE_ENV=production PORT=6380 HEATSINK_PROXY_METRICS_PORT=9380
WORKDIR /app
COPY --from=proxy-package /out /app
USER node
EXPOSE 6380 9380
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.HEATSINK_PROXY_METRICS_PORT || 9380) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "dist/main.js"]
