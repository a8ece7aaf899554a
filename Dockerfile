# syntax=docker/dockerfile:1
# Gerbang: both services in one image (docs/operations.md). Untested here: no container engine runs
# on the development machines; test/deploy/artefacts.test.ts checks that the commands, ports and
# settings used below exist.

# Build: all dependencies (TypeScript, esbuild) and the native modules' toolchain.
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY web ./web
COPY scripts ./scripts
RUN npm run build && npm prune --omit=dev

# Run: production dependencies and the build only, as the unprivileged `node` user.
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/scripts/healthcheck.mjs ./scripts/healthcheck.mjs
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080 8081
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 CMD ["node", "scripts/healthcheck.mjs"]
ENTRYPOINT ["node", "dist/cli.js"]
# `all`: both services under the supervisor; `gateway` or `logs` for one (compose, Kubernetes).
CMD ["all"]
