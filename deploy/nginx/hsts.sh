#!/bin/sh
# Run by the nginx image's entrypoint before nginx starts, with HTTPS on (deploy/compose/compose.https.yml
# mounts it into /docker-entrypoint.d/). nginx reads no environment: this writes HSTS_MAX_AGE (seconds;
# unset or 0: no header) as the line deploy/nginx/https.conf includes, which sets $hsts over HTTPS only.
set -eu
out=/run/nginx-hsts/hsts.conf
age=${HSTS_MAX_AGE:-0}
case "$age" in
'' | *[!0-9]*)
    echo "$0: HSTS_MAX_AGE must be a number of seconds, got \"$age\"" >&2
    exit 1
    ;;
esac
mkdir -p "$(dirname "$out")"
if [ "$age" -eq 0 ]; then
    : >"$out"
    echo "$0: no Strict-Transport-Security (HSTS_MAX_AGE is 0)"
else
    printf 'if ($scheme = https) {\n    set $hsts "max-age=%s";\n}\n' "$age" >"$out"
    echo "$0: Strict-Transport-Security: max-age=$age over HTTPS"
fi
