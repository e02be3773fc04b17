# One recipe for every service under services/, built from the repository root:
#   docker build --build-arg SERVICE=<name> --build-arg PORT=<its port> -t sample-<name> .
# `docker buildx build --sbom=true --provenance=mode=max` adds BuildKit's SBOM and provenance attestations.
# Every stage but the runtime runs on the builder's platform: a cross build (--platform) emulates only the runtime.
ARG SERVICE=simple
# SERVICE's port, for EXPOSE; its one source is services/<name>/src/service.ts, which the build checks.
ARG PORT=3000

# ---- manifests: the package.json files alone, so that the installs rerun only when one changes ----
FROM --platform=$BUILDPLATFORM node:24-bookworm-slim AS manifests
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/ packages/
COPY services/ services/
ARG SERVICE
RUN find packages services -mindepth 2 -maxdepth 2 ! -name package.json -exec rm -r {} + \
 && test -f "services/$SERVICE/package.json" \
 || { echo "unknown SERVICE=$SERVICE; one of $(ls services | paste -sd, | sed 's/,/, /g')" >&2; exit 1; }

# ---- build: every workspace's dependencies (tsc among them), then (from the sources .dockerignore lets in) the service, its packages with their migrations and the preload compiled ----
FROM --platform=$BUILDPLATFORM node:24-bookworm-slim AS build
WORKDIR /app
COPY --from=manifests /app/ ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
ARG SERVICE PORT
RUN node_modules/.bin/tsc -b "services/$SERVICE" packages/telemetry \
 && port=$(node -p "require('./services/$SERVICE/dist/service.js').service.port") && { [ "$port" = "$PORT" ] \
    || { echo "SERVICE=$SERVICE listens on $port (its src/service.ts): build with --build-arg PORT=$port" >&2; exit 1; }; } \
 && mkdir /dist && find packages services -path '*/dist/*' -name '*.js' -exec cp --parents -t /dist {} + \
 && for built in packages/*/dist/; do ! [ -d "${built%dist/}migrations" ] || cp -r --parents -t /dist "${built%dist/}migrations"; done

# ---- dependencies: exactly the packages that the service and the preload load, at the lockfile's versions ----
FROM --platform=$BUILDPLATFORM node:24-bookworm-slim AS dependencies
WORKDIR /app
COPY --from=manifests /app/ ./
ARG SERVICE TARGETARCH
# Named by path, as the services name their packages (as workspaces they bring every workspace's needs).
RUN npm pkg delete workspaces devDependencies \
 && npm pkg set "dependencies.@sample-services/$SERVICE=file:services/$SERVICE" dependencies.@sample-services/telemetry=file:packages/telemetry \
 && npm install --omit=dev --ignore-scripts --no-audit --no-fund \
 && for ws in packages/* services/*; do [ -e "node_modules/@sample-services/${ws#*/}" ] || rm -r "$ws"; done \
 # better-sqlite3 ships its addon for every platform: keep the image's (Node calls amd64 x64).
 && if [ -d node_modules/better-sqlite3 ]; then cd node_modules/better-sqlite3 && rm -r deps src \
    && arch=$(echo "$TARGETARCH" | sed s/amd64/x64/) && find prebuilds -type f ! -name "linux-$arch.node" -delete \
    && test -f "prebuilds/linux-$arch.node"; fi
COPY --from=build /dist/ ./

# ---- development: compose watch (deploy/compose/dev.yml) syncs sources in; tsc recompiles, node restarts ----
FROM build AS development
# The sources are the service user's, since tsc writes beside them; logs and data as in the runtime.
RUN chown -R node:node packages services && mkdir logs data && chown node:node logs data
COPY deploy/docker/health-check.mjs ./
ARG SERVICE
ENV LOG_DIR=/app/logs DATA_DIR=/app/data OTEL_SERVICE_NAME=$SERVICE PATH=/app/node_modules/.bin:$PATH
USER node
WORKDIR /app/services/$SERVICE
# --noCheck: emitting alone fits in 512 MB (lint and the build check types); --force: compose cuts file times to seconds.
CMD ["sh", "-c", "tsc -b -w --force --noCheck --preserveWatchOutput & exec node --import=@sample-services/telemetry --watch-path=dist $(printf -- '--watch-path=%s ' /app/packages/*/dist) dist/main.js"]

# ---- runtime-base: a stage of its own, so that a cross build can name another image for it (test:arm64) ----
FROM node:24-bookworm-slim AS runtime-base
# ---- runtime: node and the compiled service, without the health check (Podman builds this target) ----
FROM runtime-base AS runtime
# No package manager: the service runs from node alone. Its code stays root's; logs and data (the SQLite
# file) are the only writable paths, owned by node so that fresh volumes mounted there are too.
RUN rm -rf /usr/local/lib/node_modules /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/bin/yarn* /opt/yarn-* \
 && mkdir -p /app/logs /app/data && chown node:node /app/logs /app/data
ARG SERVICE PORT REVISION=unknown VERSION=unknown CREATED=unknown SOURCE=unknown
ENV NODE_ENV=production LOG_DIR=/app/logs DATA_DIR=/app/data OTEL_SERVICE_NAME=$SERVICE
COPY --from=dependencies /app/ /app/
COPY deploy/docker/health-check.mjs /app/
WORKDIR /app/services/$SERVICE
USER node
EXPOSE $PORT
# node as PID 1 in exec form: docker stop's SIGTERM reaches the service, which drains and exits 0.
ENTRYPOINT []
CMD ["node", "--import=@sample-services/telemetry", "dist/main.js"]
LABEL org.opencontainers.image.title="sample-$SERVICE" org.opencontainers.image.source="$SOURCE" \
      org.opencontainers.image.revision="$REVISION" org.opencontainers.image.version="$VERSION" org.opencontainers.image.created="$CREATED"

# ---- the image: the runtime with the spec's health check, every second until it first passes (Engine 25+) ----
FROM runtime
HEALTHCHECK --interval=30s --timeout=3s --start-period=5s --start-interval=1s --retries=3 \
  CMD ["node", "/app/health-check.mjs"]
