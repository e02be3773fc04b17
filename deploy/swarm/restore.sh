#!/usr/bin/env bash
# Restore of a backup.sh dump into a Swarm stack's PostgreSQL, before anything else serves from it.
#
#   WEB_REPLICAS=0 docker stack deploy -c deploy/swarm/compose.database.yml restored    # db alone, fresh volume
#   deploy/swarm/restore.sh restored users.dump
#   docker stack deploy -c deploy/swarm/compose.database.yml restored                   # web at its replicas
#
# Meant for a fresh volume (a new stack name, or after `docker stack rm` and `docker volume rm`).
# Every service of the stack but db must be at 0 replicas: what they wrote meanwhile would be dropped
# with the table, so the script stops otherwise. Run it on the node of the db task (docker exec).
# It waits for PostgreSQL to accept connections, then restores FILE as deploy/compose/restore.sh does:
# in one transaction (all or nothing), --clean --if-exists (an empty users table is replaced, its
# identity sequence too), --no-owner --no-privileges (everything belongs to this stack's POSTGRES_USER).
# DOCKER names the client (default docker); no db task accepting connections within START_TIMEOUT
# seconds (default 180) stops the script before it restores.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 STACK FILE" >&2
  exit 2
fi
stack=$1
file=$2
dockercli() { ${DOCKER:-docker} "$@"; }
timeout=${START_TIMEOUT:-180}

if [ ! -r "$file" ]; then
  echo "$file is not a readable file" >&2
  exit 2
fi
serving=$(dockercli service ls --filter "label=com.docker.stack.namespace=$stack" --format '{{.Name}} {{.Replicas}}' |
  grep -v "^${stack}_db " | grep -v ' 0/0$' || true)
if [ -n "$serving" ]; then
  echo "not at 0 replicas: $serving; deploy the stack with them at 0 first (WEB_REPLICAS=0)" >&2
  exit 1
fi

started=$SECONDS
# The task's container appears once its image is there and its volume mounted; healthy is not enough
# on a first start: pg_isready on the socket also passes for the server that initialises the volume,
# which then stops. The final server is the only one on TCP.
deadline=$((SECONDS + timeout))
until container=$(dockercli ps -q --filter "label=com.docker.swarm.service.name=${stack}_db" --filter status=running | head -n 1) &&
  [ -n "$container" ] && dockercli exec "$container" pg_isready -q -h 127.0.0.1; do
  if [ $SECONDS -ge $deadline ]; then
    echo "no task of ${stack}_db on this node accepting connections after ${timeout} s" >&2
    exit 1
  fi
  sleep 1
done
dockercli exec -i "$container" sh -c \
  'exec pg_restore -U "$POSTGRES_USER" -d "$POSTGRES_DB" --clean --if-exists --no-owner --no-privileges --single-transaction' <"$file"
users=$(dockercli exec "$container" sh -c 'exec psql -U "$POSTGRES_USER" -d "$POSTGRES_DB" -tAc "SELECT count(*) FROM users"')
echo "$file: $users users restored in $((SECONDS - started)) s; now deploy the stack with its replicas"
