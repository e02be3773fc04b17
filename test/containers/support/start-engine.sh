#!/usr/bin/env bash
# Starts Docker Engine 26 with Compose v2 and buildx (Debian 13's packages) through the shared
# docker-engine.sh: what CI and the container stage run on. Usage: start-engine.sh [SHARED_TOOLS_DIR]
set -euo pipefail
tools=${1:-${SHARED_TOOLS_DIR:-$(dirname "$0")/../../../../shared/tools}}
# docker-engine.sh reads the installed engine's version as `dockerd --version | sed` under pipefail,
# so on a fresh machine, with no dockerd yet, it exits 127 before installing anything. Until the
# package is installed, this dockerd prints no version (major 0: install); afterwards it is the real one.
dockerd() { if type -P dockerd >/dev/null; then command dockerd "$@"; fi; }
export -f dockerd
DOCKER_ENGINE_DEBIAN=13 exec "$tools/docker-engine.sh" start
