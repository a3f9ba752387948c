# syntax=docker/dockerfile:1
# The Heatsink proxy: a RESP proxy in front of Redis for clients in any language. Build from the repository root:
#   docker build -f deploy/proxy.Dockerfile -t heatsink-proxy .

# Build stage: the whole workspace, because the proxy's own packages are built from source here.
FROM node:20-bookworm-slim AS build
RUN npm install -g pnpm@10.34.9
WORKDIR /app
COPY . .
RUN pnpm install --frozen-lockfile \
 && pnpm exec turbo run build --filter=@heatsink/proxy... \
 && pnpm install --prod --frozen-lockfile --offline \
 && rm -rf .turbo test bench-results

# Runtime stage: built code and production dependencies; no compilers, no package manager.
FROM node:20-bookworm-slim
ENV NODE_ENV=production PORT=6380 HEATSINK_PROXY_METRICS_PORT=9380
WORKDIR /app
COPY --from=build --chown=node:node /app /app
USER node
EXPOSE 6380 9380
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.HEATSINK_PROXY_METRICS_PORT || 9380) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "services/proxy/dist/main.js"]
