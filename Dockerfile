# syntax=docker/dockerfile:1
# Image of the platform's Node processes (API gateway, Temporal worker, outbox relay); which one
# runs is chosen by the command (see docker-compose.yml). Node.js 24 LTS, as in package.json engines.

# ---- build: install everything, compile TypeScript, then drop the dev dependencies ----------
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json* .npmrc* ./
# The postinstall applies patch-package's fixes of dependencies (kafkajs): they must be there first.
COPY patches/ ./patches/
# `npm install`, not `npm ci`: ci fails on optional packages of other platforms missing from the
# registry (docs/decisions/platform.md). Install scripts must run (argon2's prebuilt binary).
RUN npm install --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

# ---- runtime ----------------------------------------------------------------------------------
FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
# The whole pruned tree: dist/ plus the run-time files read from disk (protos/, modules/*/manifest.json,
# migrations), whatever their final layout.
COPY --from=build --chown=node:node /app /app
USER node
EXPOSE 8080 50051
# The gateway as scripts/infra/app-up.sh starts it (its V8 flags and glibc's malloc tunables, explained there).
CMD ["env", "GLIBC_TUNABLES=glibc.malloc.mmap_threshold=4194304:glibc.malloc.hugetlb=1", "node", "--max-semi-space-size=4", "--expose-gc", "dist/api/server.js"]
