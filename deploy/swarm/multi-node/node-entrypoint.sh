#!/bin/sh
# Starts the node's engine. CGROUP_PARENT (set by cluster.sh, unique per node) keeps this engine's
# containers apart from the outer engine's in the host's cgroup tree, which is mounted here read-write.
set -eu
# Mounts made by the engine (volumes, secrets) must propagate into its containers.
mount --make-rshared /
# A node killed and started again (docker kill, docker start) finds its engine's old PID files.
rm -f /var/run/docker.pid /var/run/docker/containerd/containerd.pid
set -- --cgroup-parent="${CGROUP_PARENT:?set by cluster.sh}" -H unix:///var/run/docker.sock
# The manager also listens on a socket in a host folder, so the host's client can drive the swarm
# (`docker -H unix://…/manager.sock stack deploy -c deploy/swarm/compose.simple.yml`) with files from the host.
[ -d /run/mn-host ] && set -- "$@" -H unix:///run/mn-host/manager.sock
exec dockerd "$@"
