#!/usr/bin/env bash
# Restore of a backup.sh dump into a compose stack's PostgreSQL, before anything else serves from it.
#
#   deploy/compose/restore.sh [docker compose options] FILE
#   deploy/compose/restore.sh -p restored -f deploy/compose/compose.database.yml --env-file deploy/compose/example.env users.dump
#
# Meant for a fresh volume (another project name, -p, or after `down -v`): starts db alone, restores
# FILE, then starts the whole stack (up -d --wait). The services other than db must not be running:
# what they wrote meanwhile would be dropped with the table, so the script stops if one is.
#
# pg_restore runs in one transaction: all of FILE or nothing (a failed restore leaves the database
# as it was and the script exits non-zero). --clean --if-exists: a users table already there (the
# services create an empty one on their first start) is dropped and recreated from FILE, its
# identity sequence too, so new users continue after the highest restored id. --no-owner
# --no-privileges: everything belongs to this stack's POSTGRES_USER, whichever user the dumped stack had.
# DOCKER_COMPOSE names the client (default `docker compose`, Compose v2); PostgreSQL not accepting
# connections within START_TIMEOUT seconds (default 120) stops the script before it restores.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 [docker compose options] FILE" >&2
  exit 2
fi
file=${!#}
options=("${@:1:$#-1}")
# Unquoted: DOCKER_COMPOSE may be two words (the default).
compose() { ${DOCKER_COMPOSE:-docker compose} "${options[@]}" "$@"; }
timeout=${START_TIMEOUT:-120}

if [ ! -r "$file" ]; then
  echo "$file is not a readable file" >&2
  exit 2
fi
serving=$(compose ps --status running --services | grep -vx db || true)
if [ -n "$serving" ]; then
  echo "running beside db: $serving; stop it first (docker compose ... stop), or restore into a fresh project" >&2
  exit 1
fi

started=$SECONDS
compose up -d --wait db
# Healthy is not enough on a first start: pg_isready on the socket also passes for the server
# that initialises the volume, which then stops. The final server is the only one on TCP.
deadline=$((SECONDS + timeout))
until compose exec -T db pg_isready -q -h 127.0.0.1; do
  if [ $SECONDS -ge $deadline ]; then
    echo "PostgreSQL not accepting connections after ${timeout} s" >&2
    exit 1
  fi
  sleep 1
done
compose exec -T db sh -c 'exec pg_restore -U "$POSTGRES_USER" -d "$POSTGRES_DB" --clean --if-exists --no-owner --no-privileges --single-transaction' <"$file"
users=$(compose exec -T db sh -c 'exec psql -U "$POSTGRES_USER" -d "$POSTGRES_DB" -tAc "SELECT count(*) FROM users"')
restored=$SECONDS
compose up -d --wait
echo "$file: $users users restored in $((restored - started)) s; the stack is up $((SECONDS - restored)) s later"
