#!/usr/bin/env bash
# Starts a Docker engine of its own for the kind path on a machine with
# Debian's docker.io and no systemd, beside anything else that runs there
# (the one-node cluster's containerd, its bridge and kube-proxy's rules):
# its own data root, exec root and socket, its own containerd (dockerd's
# managed one), its bridge on 172.29.0.0/24 and networks from
# 172.30.0.0/16. It only adds iptables chains and rules (DOCKER*), as
# dockerd does; it flushes nothing.
#
# Its default runtime is hack/kind/runc-bounded, which keeps containers to
# the host's capability bounding set (a privileged container, as kind's
# nodes are, asks for every capability).
#
#   hack/kind/docker.sh start    start it unless it answers; print DOCKER_HOST=...
#   hack/kind/docker.sh stop     stop it (its data root stays)
#   hack/kind/docker.sh usable   exit 0 when a Docker engine answers at
#                                $DOCKER_HOST or this one can be started
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
STATE="${PARENTRAG_DOCKER_DIR:-/var/lib/parentrag-docker}"
RUN="${PARENTRAG_DOCKER_RUN:-/run/parentrag-docker}"
SOCK="unix://${RUN}/docker.sock"
log() { echo "docker: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }

answers() { DOCKER_HOST="${SOCK}" docker info >/dev/null 2>&1; }

start() {
  if answers; then
    echo "DOCKER_HOST=${SOCK}"
    return
  fi
  command -v dockerd >/dev/null || die "dockerd is missing: apt-get install -y docker.io"
  [[ "$(id -u)" == 0 ]] || die "dockerd needs root"
  mkdir -p "${STATE}" "${RUN}"
  cat >"${RUN}/daemon.json" <<JSON
{
  "data-root": "${STATE}",
  "exec-root": "${RUN}/exec",
  "pidfile": "${RUN}/docker.pid",
  "hosts": ["${SOCK}"],
  "bip": "172.29.0.1/24",
  "default-address-pools": [{"base": "172.30.0.0/16", "size": 24}],
  "storage-driver": "overlay2",
  "exec-opts": ["native.cgroupdriver=cgroupfs"],
  "runtimes": {"runc-bounded": {"path": "${ROOT}/hack/kind/runc-bounded"}},
  "default-runtime": "runc-bounded"
}
JSON
  log "starting dockerd (log ${RUN}/dockerd.log)"
  setsid dockerd --config-file "${RUN}/daemon.json" >"${RUN}/dockerd.log" 2>&1 < /dev/null &
  local i
  for i in $(seq 60); do
    answers && { echo "DOCKER_HOST=${SOCK}"; return; }
    sleep 1
  done
  tail -n 20 "${RUN}/dockerd.log" >&2
  die "dockerd did not answer within 60s"
}

stop() {
  local pid
  pid="$(cat "${RUN}/docker.pid" 2>/dev/null || true)"
  [[ -n "${pid}" ]] || { log "not running"; return; }
  kill "${pid}" 2>/dev/null || true
  local i
  for i in $(seq 30); do
    kill -0 "${pid}" 2>/dev/null || { log "stopped"; return; }
    sleep 1
  done
  die "dockerd ${pid} did not stop within 30s"
}

# usable reports whether an engine answers, or root can start this one.
usable() {
  command -v docker >/dev/null || return 1
  docker info >/dev/null 2>&1 && return 0
  answers && return 0
  [[ "$(id -u)" == 0 ]] && command -v dockerd >/dev/null
}

case "${1:-}" in
  start) start ;;
  usable) usable ;;
  stop) stop ;;
  *) die "usage: $0 start|stop|usable" ;;
esac
