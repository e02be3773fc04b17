#!/bin/sh
# Run by the nginx image's entrypoint before nginx starts, with HTTPS on (deploy/compose/compose.https.yml
# mounts it into /docker-entrypoint.d/). nginx reads no environment: this writes the two settings
# deploy/nginx/https.conf takes from it into the file it includes ($1 in its place, for the tests).
#   PROXY_HTTPS_PORT: the host port HTTPS is published on, as compose's ports line has it (8443,
#     127.0.0.1:8443). The plain port's redirect names it; none for 443, and none for an ephemeral
#     port (0, or nothing after the address), which only the engine knows.
#   HSTS_MAX_AGE: Strict-Transport-Security's max-age in seconds over HTTPS; unset or 0, no header.
set -eu
out=${1:-/run/nginx-https/settings.conf}
published=${PROXY_HTTPS_PORT:-}
port=${published##*:}
age=${HSTS_MAX_AGE:-0}
bad_port() {
    echo "$0: PROXY_HTTPS_PORT must be a host port, or an address and a host port (8443, 127.0.0.1:8443), got \"$published\"" >&2
    exit 1
}
# Unset, not digits after the last colon, or more than five of them: before the numeric test, which needs a number.
case "$published/$port" in
/* | */*[!0-9]* | */??????*) bad_port ;;
esac
[ "${port:-0}" -le 65535 ] || bad_port
case "$age" in
'' | *[!0-9]*)
    echo "$0: HSTS_MAX_AGE must be a number of seconds, got \"$age\"" >&2
    exit 1
    ;;
esac
mkdir -p "$(dirname "$out")"
: >"$out"
if [ "${port:-0}" -eq 0 ]; then
    echo "$0: the redirect to HTTPS names no port: PROXY_HTTPS_PORT \"$published\" is an ephemeral port"
elif [ "$port" -eq 443 ]; then
    echo "$0: the redirect to HTTPS names no port (443)"
else
    printf 'set $redirect_port ":%s";\n' "$port" >>"$out"
    echo "$0: the redirect to HTTPS names port $port"
fi
if [ "$age" -eq 0 ]; then
    echo "$0: no Strict-Transport-Security (HSTS_MAX_AGE is 0)"
else
    printf 'if ($scheme = https) {\n    set $hsts "max-age=%s";\n}\n' "$age" >>"$out"
    echo "$0: Strict-Transport-Security: max-age=$age over HTTPS"
fi
