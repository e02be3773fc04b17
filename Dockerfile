# One image recipe for every service of the monorepo (context: the repository root).
#
#   docker build -t simple:1.0 .                                                      # variant A (default)
#   docker build -t proxy:1.0    --build-arg SERVICE=proxy    --build-arg PORT=80 .
#   docker build -t database:1.0 --build-arg SERVICE=database --build-arg PORT=5000 .
#   docker build -t backend:1.0  --build-arg SERVICE=backend  --build-arg PORT=5000 .
#   docker build -t frontend:1.0 --build-arg SERVICE=frontend .
#
# Works with the legacy builder (DOCKER_BUILDKIT=0): no BuildKit-only syntax.

# Which workspace of services/ this image runs, and its port (declared once, used per stage).
ARG SERVICE=simple
ARG PORT=3000

# ---- base: the full image has python3, make and g++ for better-sqlite3 ----
FROM node:20-bookworm AS base
# Native addons compile from source: prebuilt binaries come from hosts outside the npm registry.
ENV npm_config_build_from_source=true \
    npm_config_audit=false \
    npm_config_fund=false \
    npm_config_update_notifier=false
WORKDIR /src

# Manifests first, so the dependency layers are rebuilt only when they change.
# npm ci checks every workspace against the lockfile, so all manifests are needed.
COPY package.json package-lock.json tsconfig.base.json ./
COPY packages/kit/package.json packages/kit/
COPY packages/manifest/package.json packages/manifest/
COPY packages/users/package.json packages/users/
COPY services/simple/package.json services/simple/
COPY services/proxy/package.json services/proxy/
COPY services/database/package.json services/database/
COPY services/backend/package.json services/backend/
COPY services/frontend/package.json services/frontend/

ARG SERVICE
ARG PORT
# The published port is part of the contract (spec 4.5); catch a forgotten --build-arg PORT early.
RUN case "${SERVICE}:${PORT}" in \
      simple:3000|frontend:3000|proxy:80|database:5000|backend:5000) ;; \
      simple:*|frontend:*) echo "SERVICE=${SERVICE} listens on 3000: build with --build-arg PORT=3000" >&2; exit 1 ;; \
      proxy:*) echo "SERVICE=proxy listens on 80: build with --build-arg PORT=80" >&2; exit 1 ;; \
      database:*|backend:*) echo "SERVICE=${SERVICE} listens on 5000: build with --build-arg PORT=5000" >&2; exit 1 ;; \
      *) echo "unknown SERVICE=${SERVICE}; one of simple, proxy, database, backend, frontend" >&2; exit 1 ;; \
    esac

# ---- build: compile TypeScript (native addons are not needed to type-check) ----
FROM base AS build
ARG SERVICE
RUN npm ci --ignore-scripts --workspace=services/${SERVICE} --include-workspace-root
COPY packages/ packages/
COPY services/ services/
# tsc -b compiles the service and exactly the workspaces it references; collect their JS.
RUN npx tsc -b services/${SERVICE}/tsconfig.json \
 && for ws in packages/* services/*; do \
      if [ -d "$ws/dist" ]; then mkdir -p "/dist/$ws" && cp -r "$ws/dist" "/dist/$ws/"; fi; \
    done \
 && find /dist \( -name '*.d.ts' -o -name '*.map' \) -delete

# ---- production: only this service's runtime dependencies (no sqlite or pg where unused) ----
FROM base AS production
ARG SERVICE
RUN npm ci --omit=dev --workspace=services/${SERVICE} \
 # better-sqlite3 needs only its compiled addon at run time, not the SQLite sources and objects (40 MB).
 && if [ -d node_modules/better-sqlite3 ]; then \
      cd node_modules/better-sqlite3 && mv build/Release/better_sqlite3.node /tmp/ \
      && rm -rf build deps src && mkdir -p build/Release && mv /tmp/better_sqlite3.node build/Release/; \
    fi
COPY --from=build /dist/ /src/
# /out = what runs: node_modules plus manifest, compiled JS and own node_modules of each built workspace.
RUN mkdir /out \
 && cp -r package.json node_modules /out/ \
 && for ws in packages/* services/*; do \
      [ -d "$ws/dist" ] || continue; \
      mkdir -p "/out/$ws" && cp -r "$ws/package.json" "$ws/dist" "/out/$ws/"; \
      if [ -d "$ws/node_modules" ]; then cp -r "$ws/node_modules" "/out/$ws/"; fi; \
    done \
 && find /out/node_modules -xtype l -delete

# ---- runtime: the slim image, no compilers, no npm in the command ----
FROM node:20-bookworm-slim
ARG SERVICE
ARG PORT
# LOG_DIR: every service appends its JSON log there; DATA_DIR: the SQLite file of the database
# services when DATABASE_URL is unset. Both are the only writable paths, so --read-only works.
ENV NODE_ENV=production \
    PORT=${PORT} \
    LOG_DIR=/app/logs \
    DATA_DIR=/app/data
WORKDIR /app
# Owned by the runtime user so that fresh named volumes mounted there are writable.
RUN mkdir -p /app/logs /app/data && chown node:node /app/logs /app/data
# Code stays owned by root: the service cannot modify itself.
COPY --from=production /out/ /app/
COPY deploy/docker/health-probe.mjs /app/health-probe.mjs
WORKDIR /app/services/${SERVICE}
USER node
EXPOSE ${PORT}
HEALTHCHECK --interval=30s --timeout=3s --start-period=5s --retries=3 \
  CMD ["node", "/app/health-probe.mjs"]
# node is PID 1 (exec form; no npm, and not the base image's shell entrypoint), so SIGTERM
# from docker stop reaches the service, which closes gracefully and exits 0.
ENTRYPOINT []
CMD ["node", "dist/main.js"]
