#!/usr/bin/env bash
# Rolling restart of a compose service: each of its containers is replaced by a new one, one at
# a time, and the service never runs fewer containers than it had. The new containers use the
# service's current image and settings, so after `docker compose build web` (or a new TAG) this
# rolls the new image out.
#
#   deploy/compose/rolling-restart.sh [docker compose options] SERVICE
#   WEB_PORT=127.0.0.1:0 deploy/compose/rolling-restart.sh -f deploy/compose/compose.simple.yml web
#
# For each container there at the start: scale up by one (--no-recreate: the others are not
# touched), wait until the new one is healthy, then stop the old one (SIGTERM: it stops taking
# connections and finishes its requests; both proxies retry elsewhere) and remove it. The count
# ends where it began. Replicas need a host port each (WEB_PORT=127.0.0.1:0) or none.
#
# Healthy: Docker's own status, which the services' start interval (Engine 25+) makes about a
# second after the start. Not healthy within HEALTH_TIMEOUT seconds (default 120): the script stops
# with the old containers still running. DOCKER_COMPOSE and DOCKER name the clients (default
# `docker compose`, Compose v2, and docker).
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 [docker compose options] SERVICE" >&2
  exit 2
fi
service=${!#}
options=("${@:1:$#-1}")
# Unquoted: DOCKER_COMPOSE may be two words (the default).
compose() { ${DOCKER_COMPOSE:-docker compose} "${options[@]}" "$@"; }
dockercli() { ${DOCKER:-docker} "$@"; }
timeout=${HEALTH_TIMEOUT:-120}

wait_healthy() {
  local deadline=$((SECONDS + timeout)) state
  while :; do
    state=$(dockercli inspect --format '{{.State.Status}} {{with .State.Health}}{{.Status}}{{end}}' "$1")
    case $state in
      'running healthy') return 0 ;;
      running*unhealthy) echo "$1 is unhealthy" >&2 && return 1 ;;
      'running ') return 0 ;; # no health check: running is all there is to wait for
      running*) ;;
      *) echo "$1 is ${state% *}" >&2 && return 1 ;;
    esac
    if [ $SECONDS -ge $deadline ]; then
      echo "$1 not healthy after ${timeout} s" >&2
      return 1
    fi
    sleep 1
  done
}

mapfile -t old < <(compose ps -q "$service")
count=${#old[@]}
if [ "$count" -eq 0 ]; then
  echo "$service has no container to restart" >&2
  exit 1
fi
known=("${old[@]}")
for id in "${old[@]}"; do
  step=$SECONDS
  compose up -d --no-deps --no-recreate --scale "$service=$((count + 1))" "$service"
  new=''
  for candidate in $(compose ps -q "$service"); do
    [[ " ${known[*]} " == *" $candidate "* ]] || new=$candidate
  done
  if [ -z "$new" ]; then
    echo "no new container of $service appeared" >&2
    exit 1
  fi
  known+=("$new")
  wait_healthy "$new"
  healthy=$SECONDS
  dockercli stop "$id" >/dev/null
  dockercli rm "$id" >/dev/null
  echo "${new:0:12} started and healthy in $((healthy - step)) s; ${id:0:12} stopped and removed in $((SECONDS - healthy)) s"
done
echo "$service: $count container(s) replaced"
