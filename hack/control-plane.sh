#!/usr/bin/env bash
# Builds a real Kubernetes control plane for tests and the demo from the Go
# module proxy: kube-apiserver, kube-controller-manager, kube-scheduler, etcd
# and kwok (a fake node), into a cache outside the work tree keyed by their
# versions.
#
#   hack/control-plane.sh            build what is missing, print progress
#   hack/control-plane.sh --print    also print `export KUBEBUILDER_ASSETS=...`
#   eval "$(hack/control-plane.sh --print)"
#
# Idempotent and safe to run concurrently (flock): a second run waits for the
# first and then finds everything built. A cold build took 408 s on two cores
# (docs/operator.md); it prints what it compiles every 30 seconds. Later runs
# return at once.
set -euo pipefail

# shellcheck source=progress.sh
source "$(dirname "${BASH_SOURCE[0]}")/progress.sh"

KUBE_VERSION="${KUBE_VERSION:-v1.37.2}"
STAGING_VERSION="${STAGING_VERSION:-v0.37.2}"
ETCD_VERSION="${ETCD_VERSION:-v3.7.3}"
KWOK_VERSION="${KWOK_VERSION:-v0.8.0}"
CACHE_ROOT="${PARENTRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/parentrag}"
KEY="kube-${KUBE_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}"
DIR="${CACHE_ROOT}/control-plane/${KEY}"
BIN="${DIR}/bin"

print=false
[[ "${1:-}" == "--print" ]] && print=true

log() { echo "control-plane: $*" >&2; }

have_all() {
  for b in kube-apiserver kube-controller-manager kube-scheduler etcd kwok; do
    [[ -x "${BIN}/${b}" ]] || return 1
  done
  [[ -d "${DIR}/kwok-stages" ]]
}

# build_kube builds kube-apiserver, kube-controller-manager and
# kube-scheduler from a scratch
# module: k8s.io/kubernetes requires its staging modules at v0.0.0 through
# ./staging replaces, which a module outside its tree must point at the
# published versions instead.
build_kube() {
  local src="${DIR}/src/kubernetes"
  mkdir -p "${src}"
  cd "${src}"
  if [[ ! -f .resolved ]]; then
    log "resolving k8s.io/kubernetes ${KUBE_VERSION}"
    rm -f go.mod go.sum tools.go
    go mod init parentrag.local/control-plane >/dev/null 2>&1
    local gomod
    gomod="$(go mod download -json "k8s.io/kubernetes@${KUBE_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
    {
      echo "require k8s.io/kubernetes ${KUBE_VERSION}"
      grep -E '^\s+k8s\.io/[a-z0-9-]+ v0\.0\.0$' "${gomod}" | awk -v v="${STAGING_VERSION}" '{print "replace " $1 " => " $1 " " v}'
    } >> go.mod
    cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
GO
    log "downloading modules (replacing $(grep -c '^replace' go.mod) staging modules)"
    with_progress "control-plane: downloading Kubernetes' modules" go mod tidy
    touch .resolved
  fi
  local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${KUBE_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${KUBE_VERSION#v1.}"
  ldflags="${ldflags%.*}"
  # One go build for the three: their links overlap the other's compiles.
  local missing=()
  for cmd in kube-apiserver kube-controller-manager kube-scheduler; do
    [[ -x "${BIN}/${cmd}" ]] || missing+=("k8s.io/kubernetes/cmd/${cmd}")
  done
  (( ${#missing[@]} )) || return 0
  log "building ${missing[*]##*/} ${KUBE_VERSION} (several minutes)"
  rm -rf "${BIN}/.kube.tmp" && mkdir -p "${BIN}/.kube.tmp"
  with_progress "control-plane: building ${missing[*]##*/}" env CGO_ENABLED=0 go build -v -trimpath -ldflags "${ldflags}" -o "${BIN}/.kube.tmp/" "${missing[@]}"
  mv "${BIN}"/.kube.tmp/* "${BIN}/"
  rmdir "${BIN}/.kube.tmp"
}

# build_etcd builds etcd from its server module, whose root is the main
# package.
build_etcd() {
  [[ -x "${BIN}/etcd" ]] && return
  local src="${DIR}/src/etcd"
  mkdir -p "${src}"
  cd "${src}"
  [[ -f go.mod ]] || go mod init parentrag.local/etcd >/dev/null 2>&1
  log "building etcd ${ETCD_VERSION}"
  with_progress "control-plane: downloading etcd's modules" go get "go.etcd.io/etcd/server/v3@${ETCD_VERSION}"
  with_progress "control-plane: building etcd" env CGO_ENABLED=0 go build -v -trimpath -ldflags "-s -w" -o "${BIN}/etcd.tmp" go.etcd.io/etcd/server/v3
  mv "${BIN}/etcd.tmp" "${BIN}/etcd"
}

# build_kwok installs kwok and copies the stage files its module ships, so
# pods on the fake node turn Ready.
build_kwok() {
  if [[ ! -x "${BIN}/kwok" ]]; then
    log "building kwok ${KWOK_VERSION}"
    with_progress "control-plane: building kwok" env GOBIN="${BIN}" CGO_ENABLED=0 go install -v -trimpath "sigs.k8s.io/kwok/cmd/kwok@${KWOK_VERSION}"
  fi
  if [[ ! -d "${DIR}/kwok-stages" ]]; then
    local moddir
    moddir="$(go mod download -json "sigs.k8s.io/kwok@${KWOK_VERSION}" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
    mkdir -p "${DIR}/kwok-stages.tmp"
    cp -r "${moddir}/kustomize/stage/." "${DIR}/kwok-stages.tmp/"
    chmod -R u+w "${DIR}/kwok-stages.tmp"
    mv "${DIR}/kwok-stages.tmp" "${DIR}/kwok-stages"
  fi
}

mkdir -p "${BIN}"
exec 9>"${DIR}.lock"
if ! have_all; then
  if ! flock -n 9; then
    log "another build of the control plane holds ${DIR}.lock: waiting for it"
    flock 9
  fi
  if ! have_all; then
    log "building the control plane once into ${BIN} (about 8 minutes on two cores; progress every ${PROGRESS_INTERVAL}s)"
    start=$(date +%s)
    (build_etcd)
    (build_kwok)
    (build_kube)
    log "built in $(( $(date +%s) - start ))s into ${BIN}"
  fi
fi
log "ready: ${BIN}"
if ${print}; then
  echo "export KUBEBUILDER_ASSETS=${BIN}"
  echo "export PARENTRAG_KWOK_STAGES=${DIR}/kwok-stages"
fi
