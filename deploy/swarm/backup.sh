#!/usr/bin/env bash
# Backup of a Swarm stack's PostgreSQL while it serves and takes writes: pg_dump's custom format, run
# by `docker exec` in the stack's db task (the server's own version, over its local socket: no password).
#
#   deploy/swarm/backup.sh STACK FILE
#   deploy/swarm/backup.sh database users.dump
#
# Run it on the node that runs the db task (the one labelled db=true): docker exec reaches only this
# node's containers. Consistent as with compose (deploy/compose/backup.sh): FILE holds the database as
# of the moment pg_dump began, while writes go on. The dump goes to FILE.partial and becomes FILE only
# when pg_dump succeeded; FILE must not exist. DOCKER names the client (default docker).
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 STACK FILE" >&2
  exit 2
fi
stack=$1
file=$2
dockercli() { ${DOCKER:-docker} "$@"; }

if [ -e "$file" ]; then
  echo "$file already exists: name a new file" >&2
  exit 2
fi
container=$(dockercli ps -q --filter "label=com.docker.swarm.service.name=${stack}_db" --filter status=running | head -n 1)
if [ -z "$container" ]; then
  echo "no running task of ${stack}_db on this node: run this where the db task runs (docker service ps ${stack}_db)" >&2
  exit 1
fi
partial="$file.partial"
trap 'rm -f "$partial"' EXIT

started=$SECONDS
# Single quotes: the container's own POSTGRES_USER and POSTGRES_DB, i.e. the stack's.
dockercli exec "$container" sh -c 'exec pg_dump -U "$POSTGRES_USER" -d "$POSTGRES_DB" --format=custom' >"$partial"
mv "$partial" "$file"
echo "$file: $(stat -c %s "$file") bytes, dumped in $((SECONDS - started)) s"
