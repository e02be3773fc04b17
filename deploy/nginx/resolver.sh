#!/bin/sh
# Run by the nginx image's entrypoint before nginx starts (deploy/compose/compose.simple.yml mounts it
# into /docker-entrypoint.d/). nginx.conf's resolver is Docker's embedded DNS, 127.0.0.11, which
# Podman lacks: its DNS (aardvark-dns) answers at the network's gateway. Each engine writes its own
# DNS as the first nameserver of /etc/resolv.conf (Podman adds the host's after it, which cannot
# name containers), so this copies nginx.conf's resolver line with that one address into the file
# nginx.conf includes in its server block, where it takes the place of the http block's.
set -eu
out=/run/nginx-resolver/local.conf
ns=$(awk '$1 == "nameserver" { print $2; exit }' /etc/resolv.conf)
if [ -z "$ns" ]; then
    echo "$0: no nameserver in /etc/resolv.conf; nginx.conf's resolver stays"
    exit 0
fi
# nginx writes an IPv6 address in brackets.
case "$ns" in *:*) ns="[$ns]" ;; esac
mkdir -p "$(dirname "$out")"
sed -n "s/^ *resolver 127\.0\.0\.11 \(.*\)$/resolver $ns \1/p" /etc/nginx/nginx.conf >"$out"
echo "$0: $(cat "$out")"
