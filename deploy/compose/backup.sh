#!/usr/bin/env bash
# Backup of a compose stack's PostgreSQL while it serves and takes writes: pg_dump's custom format,
# run in the db container (the server's own version, over its local socket: no password needed).
#
#   deploy/compose/backup.sh [docker compose options] FILE
#   deploy/compose/backup.sh -f deploy/compose/compose.database.yml --env-file deploy/compose/example.env users.dump
#
# Consistent: pg_dump reads every table in one repeatable-read transaction, so FILE holds the
# database as of the moment pg_dump began: every user answered 201 before then, none half-written,
# and writes go on meanwhile (pg_dump's locks only keep the tables' definitions from changing).
# The dump goes to FILE.partial and becomes FILE only when pg_dump succeeded; FILE must not exist.
# Restore it with restore.sh (docs/backup-and-restore.md). DOCKER_COMPOSE names the client
# (default `docker compose`, Compose v2).
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 [docker compose options] FILE" >&2
  exit 2
fi
file=${!#}
options=("${@:1:$#-1}")
# Unquoted: DOCKER_COMPOSE may be two words (the default).
compose() { ${DOCKER_COMPOSE:-docker compose} "${options[@]}" "$@"; }

if [ -e "$file" ]; then
  echo "$file already exists: name a new file" >&2
  exit 2
fi
partial="$file.partial"
trap 'rm -f "$partial"' EXIT

started=$SECONDS
# Single quotes: the container's own POSTGRES_USER and POSTGRES_DB, i.e. the stack's.
compose exec -T db sh -c 'exec pg_dump -U "$POSTGRES_USER" -d "$POSTGRES_DB" --format=custom' >"$partial"
mv "$partial" "$file"
echo "$file: $(stat -c %s "$file") bytes, dumped in $((SECONDS - started)) s"
