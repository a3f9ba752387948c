# syntax=docker/dockerfile:1
# The Heatsink aggregator (the control plane). Build from the repository root:
#   docker build -f deploy/aggregator.Dockerfile -t heatsink-aggregator .
# The same image runs the quickstart's traffic agent (deploy/compose.yaml uses it for the demo agent).

# Build stage: the whole workspace, because the aggregator's own packages are built from source here.
FROM node:20-bookworm-slim AS build
RUN npm install -g pnpm@10.34.9
WORKDIR /app
COPY . .
RUN pnpm install --frozen-lockfile \
 && pnpm exec turbo run build --filter=@heatsink/aggregator... --filter=@heatsink/quickstart... \
 && pnpm install --prod --frozen-lockfile --offline \
 && rm -rf .turbo test bench-results

# Runtime stage: built code, production dependencies and the migrations; no compilers, no package manager.
# The repository layout is kept: the aggregator finds migrations/ relative to its own files.
FROM node:20-bookworm-slim
ENV NODE_ENV=production PORT=8080
WORKDIR /app
COPY --from=build --chown=node:node /app /app
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "services/aggregator/dist/main.js"]
