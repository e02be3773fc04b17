#!/bin/bash
# The image health check (spec 8): GET /health (or the path given, e.g. /ready) on the service's
# probe port, PROBE_PORT, which the image sets on the container's loopback (never queued behind a
# flood's connections); exit 0 only on 200. bash's /dev/tcp does the request: no Node process is
# started per probe (tens of MB, and most of a probe's time on a container at its CPU limit), and
# the image needs no curl or wget.
set -euo pipefail
path=${1:-/health}
port=${PROBE_PORT:?the image sets PROBE_PORT}
if ! { exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null; then
  echo "health probe: nothing answers on 127.0.0.1:$port" >&2
  exit 1
fi
printf 'GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' "$path" >&3
# Below the HEALTHCHECK's 3 s timeout, so a hung server fails cleanly.
if ! IFS= read -r -t 2.5 status <&3; then
  echo "health probe: no answer within 2.5 s" >&2
  exit 1
fi
[[ $status =~ ^HTTP/1\.[01]\ 200\  ]] || {
  echo "health probe: ${status%$'\r'}" >&2
  exit 1
}
