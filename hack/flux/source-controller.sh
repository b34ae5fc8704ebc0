#!/usr/bin/env bash
# Builds Flux's source-controller for the GitOps tests from the Go module
# proxy, with its CRDs, into a cache outside the work tree keyed by its
# version, as hack/control-plane.sh does for the control plane.
#
#   hack/flux/source-controller.sh           build what is missing
#   hack/flux/source-controller.sh --print   also print the exports the tests read
#   eval "$(hack/flux/source-controller.sh --print)"
#
# It builds in a scratch module of its own, so source-controller's
# dependencies never touch parentrag's go.mod. v1.9.6 is the newest release
# that builds with Go 1.26 (v1.10 needs Go 1.27). Idempotent and safe to run
# concurrently (flock); a cold build takes several minutes.
set -euo pipefail

SOURCE_CONTROLLER_VERSION="${SOURCE_CONTROLLER_VERSION:-v1.9.6}"
ARTIFACT_VERSION="${ARTIFACT_VERSION:-v0.18.0}"
CACHE_ROOT="${PARENTRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/parentrag}"
DIR="${CACHE_ROOT}/flux/source-controller-${SOURCE_CONTROLLER_VERSION}"
BIN="${DIR}/bin/source-controller"
CRDS="${DIR}/crds"

print=false
[[ "${1:-}" == "--print" ]] && print=true

log() { echo "source-controller: $*" >&2; }

have_all() { [[ -x "${BIN}" && -d "${CRDS}" ]]; }

# module_dir prints where the module cache holds a module version.
module_dir() {
  go mod download -json "$1" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'
}

# build_binary builds source-controller in a scratch module: a module
# required as a dependency loses its own replace lines, so the scratch
# module repeats them (its ./api replace becomes the published api module).
# The module proxy serves github.com/fluxcd/pkg/artifact v0.18.0 but not the
# v0.18.3 that v1.9.6 asks for, a patch release with the same API, so the
# scratch module replaces it. `go build -mod=mod` resolves only what the
# binary imports: `go mod tidy` would also want the test servers of
# source-controller's tests, which the proxy does not serve.
build_binary() {
  [[ -x "${BIN}" ]] && return
  local src="${DIR}/src"
  mkdir -p "${src}" "$(dirname "${BIN}")"
  cd "${src}"
  if [[ ! -f go.mod ]]; then
    go mod init parentrag.local/source-controller >/dev/null 2>&1
    local gomod
    gomod="$(go mod download -json "github.com/fluxcd/source-controller@${SOURCE_CONTROLLER_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
    {
      echo "require github.com/fluxcd/source-controller ${SOURCE_CONTROLLER_VERSION}"
      grep -E '^replace ' "${gomod}" | grep -v '=> \./'
      echo "replace github.com/fluxcd/pkg/artifact => github.com/fluxcd/pkg/artifact ${ARTIFACT_VERSION}"
    } >> go.mod
    cat > tools.go <<'GO'
//go:build tools

package tools

import _ "github.com/fluxcd/source-controller"
GO
  fi
  log "building source-controller ${SOURCE_CONTROLLER_VERSION} (several minutes)"
  CGO_ENABLED=0 go build -mod=mod -trimpath -ldflags "-s -w" -o "${BIN}.tmp" github.com/fluxcd/source-controller
  mv "${BIN}.tmp" "${BIN}"
}

# copy_crds copies the CRDs the module ships in config/crd/bases.
copy_crds() {
  [[ -d "${CRDS}" ]] && return
  local moddir
  moddir="$(module_dir "github.com/fluxcd/source-controller@${SOURCE_CONTROLLER_VERSION}")"
  mkdir -p "${CRDS}.tmp"
  cp "${moddir}"/config/crd/bases/*.yaml "${CRDS}.tmp/"
  chmod -R u+w "${CRDS}.tmp"
  mv "${CRDS}.tmp" "${CRDS}"
}

mkdir -p "${DIR}"
exec 9>"${DIR}.lock"
if ! have_all; then
  log "waiting for the build lock ${DIR}.lock"
  flock 9
  if ! have_all; then
    start=$(date +%s)
    (copy_crds)
    (build_binary)
    log "built in $(( $(date +%s) - start ))s into ${DIR}"
  fi
fi
log "ready: ${BIN}"
if ${print}; then
  echo "export PARENTRAG_SOURCE_CONTROLLER=${BIN}"
  echo "export PARENTRAG_FLUX_CRDS=${CRDS}"
fi
