# One image recipe for every service of the monorepo (context: the repository root).
#
#   docker build -t <image> .                                # the default SERVICE (below)
#   docker build --build-arg SERVICE=<name> -t <image> .     # any folder under services/
#
# Each service's facts (name, port) are its own (services/<name>/src/service.ts): an unknown
# SERVICE fails with one line listing the folders under services/, and this file names no service
# but the default (test/consistency checks that). BuildKit (the default builder of Engine 23+)
# builds it offline from local base images, and so does Podman's builder (buildah).
#
# Every stage but the last runs on the builder's own platform ($BUILDPLATFORM): the compiled
# JavaScript and the installed packages are the same for every platform (the one native addon
# ships a build per platform), so `--platform linux/arm64` on an amd64 machine emulates only the
# runtime stage. Docker's legacy builder (DOCKER_BUILDKIT=0, deprecated) sets no $BUILDPLATFORM
# and stops at the first FROM (docs/docker-versions.md).
#
# No EXPOSE: its port would have to be written here or passed in as a build argument (a
# Dockerfile cannot read it from a file), a second source beside the service's own. EXPOSE only
# documents the port and feeds `docker run -P`; `-p <port>:<port>` and compose `ports:` publish
# without it, and containers reach each other on any port. The service takes its default port
# from its dist/service.js (PORT overrides it), where the health check reads it too.

ARG SERVICE=simple

# ---- manifests: every workspace's package.json and nothing else ----
# Copying the workspace folders whole and keeping only package.json lets the dependency layers
# below depend on the manifests alone, without listing the workspaces here.
FROM --platform=$BUILDPLATFORM node:24-bookworm-slim AS manifests
WORKDIR /src
COPY packages/ packages/
COPY services/ services/
RUN find packages services -type f ! -name package.json -delete \
 && find packages services -type d -empty -delete

# ---- base: no compilers needed: the one native addon (better-sqlite3) ships Node-API builds ----
FROM --platform=$BUILDPLATFORM node:24-bookworm-slim AS base
ENV npm_config_audit=false \
    npm_config_fund=false \
    npm_config_update_notifier=false
WORKDIR /src
# npm ci checks every workspace against the lockfile, so all manifests are needed; the layers
# after these copies are rebuilt only when a manifest or the lockfile changes.
COPY package.json package-lock.json ./
COPY --from=manifests /src/ ./

# ---- service: SERVICE checked, before anything service-specific ----
FROM base AS service
# No build argument is declared above this install, so every service's build shares the layer.
RUN npm ci --ignore-scripts
COPY tsconfig.base.json ./
ARG SERVICE
RUN test -d "services/${SERVICE}" \
 || { echo "unknown SERVICE=${SERVICE}; one of $(ls services | paste -sd, | sed 's/,/, /g')" >&2; exit 1; }

# ---- build: compile the service ----
FROM service AS build
COPY packages/ packages/
COPY services/ services/
ARG SERVICE
# tsc -b compiles the service and exactly the workspaces it references, and the OpenTelemetry preload
# (packages/telemetry) that the image runs it with; the image runs that output as it is (no bundler:
# docs/operations.md, "Start-up"). Collect the JS.
RUN npx tsc -b "services/${SERVICE}/tsconfig.json" packages/telemetry/tsconfig.json \
 && for ws in packages/* services/*; do \
      if [ -d "$ws/dist" ]; then mkdir -p "/dist/$ws" && cp -r "$ws/dist" "/dist/$ws/"; fi; \
    done \
 && find /dist \( -name '*.d.ts' -o -name '*.map' \) -delete

# ---- production: exactly the tree of this service's package.json (no sqlite, pg or Swagger UI where unused) ----
# and the OpenTelemetry preload's: the service's own tree has no OpenTelemetry package, the image adds it.
FROM base AS production
# BuildKit runs independent stages at once: this copy makes the install wait for the check, so an
# unknown SERVICE stops the build with the check's one line, not with npm's error about the workspace.
ARG SERVICE
COPY --from=service /src/services/${SERVICE}/package.json /tmp/checked-service.json
COPY deploy/docker/prune-tree.mjs /tmp/
ARG TARGETARCH
# npm also installs what a workspace takes as an optional peer when another service lists it; the
# prune removes what the service's own production tree does not reach. No install scripts: none of
# the runtime packages needs one, and the repository's own (scripts/own-node.cjs) is for old host Nodes.
RUN npm ci --omit=dev --ignore-scripts "--workspace=services/${SERVICE}" --workspace=packages/telemetry \
 && node /tmp/prune-tree.mjs "${SERVICE}" packages/telemetry \
 # better-sqlite3 ships a Node-API addon per platform; keep the one for the image's platform (Node
 # names amd64 x64), which is not the platform this stage runs on in a cross build.
 && if [ -d node_modules/better-sqlite3 ]; then \
      cd node_modules/better-sqlite3 && keep="linux-$(echo "${TARGETARCH}" | sed 's/^amd64$/x64/').node" \
      && find prebuilds -type f ! -name "$keep" -delete && rm -rf deps src binding.gyp \
      && test -f "prebuilds/$keep"; \
    fi
# The SBOM (CycloneDX) of exactly the packages installed above, for /app/sbom.cdx.json.
COPY deploy/docker/sbom-manifest.mjs /tmp/
RUN cp package.json /tmp/package.json.orig \
 && node /tmp/sbom-manifest.mjs \
 && npm sbom --sbom-format cyclonedx --omit=dev > /sbom.cdx.json \
 && mv /tmp/package.json.orig package.json
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

# ---- development: the service from its sources, recompiled and restarted on every change ----
# Only a target: `docker compose -f deploy/compose/<stack>.yml -f deploy/compose/dev.yml watch`
# builds it (docs/development.md). BuildKit builds just the stages the requested one needs, so the
# image (the last stage) never builds this one, and this one builds nothing of production's. It
# runs on the builder's platform, the developer's own machine. Offline like the rest: the service
# stage's install already holds the dev dependencies (tsc among them), so this stage installs nothing.
FROM service AS development
# Compose watch copies each changed source in, and tsc writes its output beside it: the workspaces
# belong to the user the service runs as. The image keeps its code root's; this one is rewritten
# while it runs.
COPY --chown=node:node packages/ packages/
COPY --chown=node:node services/ services/
# What the compose files expect of the image: the health check, and the log and data folders
# owned by the runtime user (fresh named volumes take that owner), as in the image.
COPY deploy/docker/health-check.mjs /app/health-check.mjs
RUN mkdir -p /app/logs /app/data && chown node:node /app/logs /app/data
# No NODE_OPTIONS: the image's young-generation cap would slow the compiler that runs here too.
ENV LOG_DIR=/app/logs \
    DATA_DIR=/app/data \
    PATH=/src/node_modules/.bin:$PATH
USER node
ARG SERVICE
# --noCheck: emit only. Type-checking the service with its workspaces (Fastify's and TypeBox's types)
# takes tsc 5-15 s and up to 1 GB per change, and its watch ran out of memory within the stacks'
# 512 MB; emitting alone takes it a second or two and about 250 MB. The types are checked where the
# code is written (the editor, npm run build, lint) and by the image build, not in this loop.
# Compiled once here, so that a container serves at once; with the OpenTelemetry preload, as the image runs it.
RUN tsc -b --noCheck "services/${SERVICE}/tsconfig.json" packages/telemetry/tsconfig.json
ENV OTEL_SERVICE_NAME=${SERVICE}
WORKDIR /src/services/${SERVICE}
# tsc -b --watch recompiles what a synced source touches: the service and the workspaces it
# references, into the same dist folders the image runs. --force: compose copies a source in with
# its time cut to the second, so an edit saved within a second of the last compile looks older than
# that compile's output, and tsc -b, which decides by time, would skip it; so the project a change
# touches is always compiled (and, once, every project when the container starts). node --watch
# restarts the service when compiled output changes: watching the dist folders, not only the
# imported modules (node's default), so that files read at start-up, such as the users page's
# browser scripts, count as well. exec: node takes the shell's place, so a stop's SIGTERM reaches
# it (no entrypoint script in between); on each restart it stops the service with SIGTERM too,
# which the service drains as in production.
ENTRYPOINT []
CMD ["sh", "-c", "tsc -b -w --force --noCheck --preserveWatchOutput & exec node --import=@svc/telemetry --watch-path=dist $(printf -- '--watch-path=%s ' /src/packages/*/dist) dist/main.js"]

# ---- runtime-base: what the image runs on, for the image's platform ----
# A stage of its own, so that a build can put another image in its place without touching the stages
# before, which run on the builder's platform: BuildKit's `--build-context runtime-base=docker-image://<image>`
# (npm run test:arm64 names a local arm64 stand-in so).
FROM node:24-bookworm-slim AS runtime-base

# ---- runtime: the slim image, no compilers, no npm in the command ----
# Everything but the health check, which the last stage adds: Podman's builder rejects
# --start-interval, and reads only the stages it builds, so Podman builds this target
# (deploy/compose/podman.yml, whose health checks take the image's place).
FROM runtime-base AS runtime
# LOG_DIR: every service appends its JSON log there; DATA_DIR: the SQLite file of the services
# that keep users when DATABASE_URL is unset. Both are the only writable paths, so --read-only works.
ENV NODE_ENV=production \
    LOG_DIR=/app/logs \
    DATA_DIR=/app/data
WORKDIR /app
# Owned by the runtime user so that fresh named volumes mounted there are writable.
RUN mkdir -p /app/logs /app/data && chown node:node /app/logs /app/data
# Code stays owned by root: the service cannot modify itself.
COPY --from=production /out/ /app/
COPY deploy/docker/health-check.mjs /app/health-check.mjs
COPY --from=production /sbom.cdx.json /app/sbom.cdx.json
ARG SERVICE
# The spans' service.name, once an OTLP endpoint turns tracing on (docs/observability-traces.md).
ENV OTEL_SERVICE_NAME=${SERVICE}
WORKDIR /app/services/${SERVICE}
USER node
# node is PID 1 (exec form; no npm, and not the base image's shell entrypoint), so SIGTERM
# from docker stop reaches the service, which closes gracefully and exits 0. The OpenTelemetry
# preload is in the command, not in NODE_OPTIONS, which a deployment may set: it loads nothing
# more unless an OTLP endpoint is set.
ENTRYPOINT []
CMD ["node", "--import=@svc/telemetry", "dist/main.js"]

# OCI labels; revision, version and created come from the builder (README, "Images"): a Dockerfile
# cannot read them itself. Last, so a new revision rebuilds no layer.
ARG REVISION=unknown
ARG VERSION=unknown
ARG CREATED=unknown
ARG SOURCE=unknown
LABEL org.opencontainers.image.title="sample-${SERVICE}" \
      org.opencontainers.image.description="The ${SERVICE} service of the sample containerized web services" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.created="${CREATED}"

# ---- the image: runtime with the health check ----
FROM runtime
# The spec's check (interval 30 s, timeout 3 s, start period 5 s, 3 retries), probed every second
# during the start period (Engine 25+): healthy about a second after start, not 30 s, so compose's
# depends_on and --wait, Swarm's start-first updates and scale-ups go on without waiting an interval.
HEALTHCHECK --interval=30s --timeout=3s --start-period=5s --start-interval=1s --retries=3 \
  CMD ["node", "/app/health-check.mjs"]
