#!/usr/bin/env bash
# deploy/swarm/multi-node/cluster.sh up|down|status
#
# A Docker Swarm of three machines on one machine: a manager and two workers, each a Docker engine in
# a container (the image of the Dockerfile beside this script), on a user-defined bridge network, with
# the project's images loaded into every engine (there is no registry to pull from). Traffic between
# the nodes' containers goes through real overlay networks (VXLAN), as between machines.
#
#   TAG=1.0 deploy/swarm/multi-node/cluster.sh up       # node image, 3 engines, swarm, images, db=true label
#   deploy/swarm/multi-node/cluster.sh status           # nodes, services, the manager's address
#   deploy/swarm/multi-node/cluster.sh down             # removes all it created (containers, volumes, image…)
#
# Environment:
#   CLUSTER   name prefix of everything created, and the label mn.cluster=<CLUSTER> on it (default mn)
#   TAG       tag of the project's images to load (default latest): sample-simple, sample-database
#   IMAGES    the images to load, instead of those two, nginx:1.30 and postgres:15
#   STATE_DIR where the manager's API socket lives (default ${TMPDIR:-/tmp}/<CLUSTER>)
#   NODE_BASE the node image's Debian bookworm base (default bookworm-minbase:latest when the engine has
#             it, the offline stand-in of /work/shared/tools/offline-images; else debian:bookworm-slim)
#
# Needs root (or the docker group), and an engine that allows these containers: no --privileged, but
# 17 capabilities (NODE_CAPS), no seccomp/AppArmor confinement and the host's cgroup tree, which is
# what an engine needs to run containers itself. The kernel needs VXLAN (overlay networks); without
# IPVS, services must use `endpoint_mode: dnsrr` and host-mode ports, as deploy/swarm/*.yml do.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CLUSTER=${CLUSTER:-mn}
TAG=${TAG:-latest}
STATE_DIR=${STATE_DIR:-${TMPDIR:-/tmp}/$CLUSTER}
LABEL=mn.cluster=$CLUSTER
NODE_IMAGE=$CLUSTER-node:latest
NETWORK=$CLUSTER-net
NODES=("$CLUSTER-manager" "$CLUSTER-worker1" "$CLUSTER-worker2")
MANAGER=${NODES[0]}
DB_NODE=${NODES[1]}
# What a node's engine needs for itself and its containers: Docker's default set, which it hands on to
# them, plus SYS_ADMIN (mounts, namespaces, cgroups), NET_ADMIN (bridges, VXLAN, iptables) and SYS_PTRACE
# (entering a container whose process runs as another user: docker exec, health checks). Not
# `--cap-add ALL --cap-drop SYS_RESOURCE`: since Engine 23, ALL means the capabilities the outer dockerd
# itself has, and naming one it lacks fails even in --cap-drop ("capability not supported by your kernel or
# not available in the current environment"), as on machines whose dockerd runs without SYS_RESOURCE;
# without the drop, a node would get every other capability there is (SYS_MODULE, SYS_RAWIO, SYS_TIME…).
NODE_CAPS=(CHOWN DAC_OVERRIDE FSETID FOWNER MKNOD NET_RAW SETGID SETUID SETFCAP SETPCAP NET_BIND_SERVICE SYS_CHROOT KILL
  AUDIT_WRITE SYS_ADMIN NET_ADMIN SYS_PTRACE)
read -r -a IMAGE_LIST <<<"${IMAGES:-sample-simple:$TAG sample-database:$TAG nginx:1.30 postgres:15}"

say() { printf 'cluster.sh: %s\n' "$*"; }
die() { printf 'cluster.sh: error: %s\n' "$*" >&2; exit 1; }
manager() { docker -H "unix://$STATE_DIR/manager.sock" "$@"; }
ip_of() { docker inspect --format "{{(index .NetworkSettings.Networks \"$NETWORK\").IPAddress}}" "$1"; }

build_node_image() {
  local base=${NODE_BASE:-}
  if [ -z "$base" ]; then
    base=debian:bookworm-slim
    docker image inspect bookworm-minbase:latest >/dev/null 2>&1 && base=bookworm-minbase:latest
  fi
  say "building $NODE_IMAGE on $base"
  # BuildKit (the engine's default builder) finds the base among the engine's images; the host's
  # network for apt (no registry, but the machine's Debian mirror).
  if ! docker build --pull=false --network host --label "$LABEL" --build-arg "BASE=$base" -t "$NODE_IMAGE" "$HERE" >"$STATE_DIR/build.log" 2>&1; then
    tail -n 30 "$STATE_DIR/build.log" >&2
    die "building $NODE_IMAGE failed (log: $STATE_DIR/build.log)"
  fi
}

start_node() {
  local node=$1 host_dir=()
  # Only the manager's API is on a host folder: the host's client drives the swarm through it.
  [ "$node" = "$MANAGER" ] && host_dir=(-v "$STATE_DIR:/run/mn-host")
  # An engine in a container without --privileged: the capabilities of NODE_CAPS, no syscall or
  # AppArmor filter, writable /proc/sys (systempaths) for the overlay's sysctls, /dev/net/tun, and the
  # host's cgroup tree, where the inner engine puts its containers under a parent of its own.
  local caps=(--cap-drop ALL) cap
  for cap in "${NODE_CAPS[@]}"; do caps+=(--cap-add "$cap"); done
  docker run -d --name "$node" --hostname "$node" --label "$LABEL" --network "$NETWORK" "${caps[@]}" \
    --security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined \
    --device /dev/net/tun -v /sys/fs/cgroup:/sys/fs/cgroup:rw -e "CGROUP_PARENT=$node" \
    --mount "type=volume,dst=/var/lib/docker,volume-label=$LABEL" "${host_dir[@]}" "$NODE_IMAGE" >/dev/null
}

wait_engine() {
  local node=$1 i
  for i in $(seq 60); do
    docker exec "$node" docker info >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  docker logs --tail 20 "$node" >&2 || true
  die "the engine in $node did not answer within 30 s"
}

load_images() {
  local present=() image node pids=()
  for image in "${IMAGE_LIST[@]}"; do
    if docker image inspect "$image" >/dev/null 2>&1; then present+=("$image"); else say "WARNING: $image is not in this engine; not loaded"; fi
  done
  [ ${#present[@]} -gt 0 ] || return 0
  say "loading ${present[*]} into every node"
  # One archive (shared layers once), read by the three engines at the same time.
  docker save -o "$STATE_DIR/images.tar" "${present[@]}"
  for node in "${NODES[@]}"; do
    docker exec -i "$node" docker load -q <"$STATE_DIR/images.tar" >/dev/null &
    pids+=($!)
  done
  for node in "${pids[@]}"; do wait "$node" || die "docker load failed in a node"; done
  rm -f "$STATE_DIR/images.tar"
}

up() {
  docker network inspect "$NETWORK" >/dev/null 2>&1 && die "$NETWORK exists: run down first (CLUSTER=$CLUSTER)"
  mkdir -p "$STATE_DIR"
  build_node_image
  docker network create --label "$LABEL" "$NETWORK" >/dev/null
  local node
  for node in "${NODES[@]}"; do start_node "$node"; done
  for node in "${NODES[@]}"; do wait_engine "$node"; done

  local addr token
  addr=$(ip_of "$MANAGER")
  manager swarm init --advertise-addr "$addr" >/dev/null
  token=$(manager swarm join-token -q worker)
  for node in "${NODES[@]:1}"; do docker exec "$node" docker swarm join --token "$token" "$addr:2377" >/dev/null; done
  # PostgreSQL of deploy/swarm/compose.database.yml goes to this node only, with its volume.
  manager node update --label-add db=true "$DB_NODE" >/dev/null
  say "swarm: $MANAGER (manager, $addr) and ${NODES[*]:1} (workers); $DB_NODE labelled db=true"
  load_images
  usage
}

usage() {
  local addr
  addr=$(ip_of "$MANAGER")
  cat <<EOF

Drive the swarm through the manager's API socket with this machine's client (it reads the compose
files and configs here), or inside the manager (docker exec -it $MANAGER sh):
  swarm() { docker -H unix://$STATE_DIR/manager.sock "\$@"; }
  swarm node ls
  TAG=$TAG swarm stack deploy -c deploy/swarm/compose.simple.yml simple
  curl http://$addr/                     # nginx on the manager, web on every node ("hostname")
  printf %s 'the password' | swarm secret create db-password -
  TAG=$TAG swarm stack deploy -c deploy/swarm/compose.database.yml database
  curl http://$addr:5000/api/users       # variant B, on each node that runs a replica
  docker kill ${NODES[2]}             # a machine lost (this engine): its tasks start on the others
  docker start ${NODES[2]}            # back: its engine starts and rejoins the swarm
A node's address: docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' <node>
EOF
}

status() {
  docker ps -a --filter "label=$LABEL" --format 'table {{.Names}}\t{{.Status}}'
  if [ -S "$STATE_DIR/manager.sock" ] && manager info >/dev/null 2>&1; then
    manager node ls
    manager service ls
  else
    say "the manager's engine does not answer"
  fi
}

down() {
  local containers volumes
  mapfile -t containers < <(docker ps -aq --filter "label=$LABEL")
  # -v: each engine's /var/lib/docker (its images, containers and volumes) goes with its node.
  [ ${#containers[@]} -eq 0 ] || docker rm -fv "${containers[@]}" >/dev/null
  mapfile -t volumes < <(docker volume ls -q --filter "label=$LABEL")
  [ ${#volumes[@]} -eq 0 ] || docker volume rm "${volumes[@]}" >/dev/null
  docker network rm "$NETWORK" >/dev/null 2>&1 || true
  # Its layers stay in BuildKit's cache (which the engine's garbage collection bounds): the next up builds
  # in a second, without the mirror.
  docker image rm "$NODE_IMAGE" >/dev/null 2>&1 || true
  # The inner engines' cgroups outside their node's own (e.g. cgroup v1's unified tree) outlive it;
  # empty by now, they are removed deepest first.
  local node dir
  for node in "${NODES[@]}"; do
    find /sys/fs/cgroup -maxdepth 4 -type d -name "$node" 2>/dev/null | while read -r dir; do
      find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null || true
    done
  done
  rm -rf "$STATE_DIR"
  say "removed cluster $CLUSTER"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) sed -n '2,25p' "$0"; exit 2 ;;
esac
