#!/usr/bin/env bash
# Builds Flux's source-controller and kustomize-controller for the GitOps
# tests from the Go module proxy, with their CRDs, into a cache outside the
# work tree keyed by their versions, as hack/control-plane.sh does for the
# control plane.
#
#   hack/flux/source-controller.sh           build what is missing
#   hack/flux/source-controller.sh --print   also print the exports the tests read
#   eval "$(hack/flux/source-controller.sh --print)"
#
# Each controller builds in a scratch module of its own, so Flux's
# dependencies never touch parentrag's go.mod. v1.9.6 is the newest release
# of both that builds with Go 1.26 (v1.10 needs Go 1.27). Idempotent and
# safe to run concurrently (flock); a cold build takes about 5 minutes per
# controller on two cores.
set -euo pipefail

# shellcheck source=../progress.sh
source "$(dirname "${BASH_SOURCE[0]}")/../progress.sh"

FLUX_VERSION="${FLUX_VERSION:-v1.9.6}"
ARTIFACT_VERSION="${ARTIFACT_VERSION:-v0.18.0}"
CACHE_ROOT="${PARENTRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/parentrag}"
DIR="${CACHE_ROOT}/flux/controllers-${FLUX_VERSION}"
BIN="${DIR}/bin"
CRDS="${DIR}/crds"
CONTROLLERS=(source-controller kustomize-controller)

print=false
[[ "${1:-}" == "--print" ]] && print=true

log() { echo "flux: $*" >&2; }

have_all() {
  for c in "${CONTROLLERS[@]}"; do
    [[ -x "${BIN}/${c}" ]] || return 1
  done
  [[ -d "${CRDS}" ]]
}

# module_json prints a field of `go mod download -json` for a module.
module_json() {
  go mod download -json "$1" | sed -n "s/.*\"$2\": \"\\(.*\\)\".*/\\1/p"
}

# replaces prints the replace directives of a go.mod, blocks included, as
# single lines, without those to local folders.
replaces() {
  awk '/^replace \($/ {block=1; next} block && /^\)/ {block=0; next} block {print "replace " $0; next} /^replace / {print}' "$1" | grep -v '=> \./' || true
}

# build_controller builds one controller in a scratch module: a module
# required as a dependency loses its own replace lines, so the scratch
# module repeats them. The module proxy serves github.com/fluxcd/pkg/artifact
# v0.18.0 but not the v0.18.3 that source-controller v1.9.6 asks for, a
# patch release with the same API, so the scratch module replaces it.
# `go build -mod=mod` resolves only what the binary imports: `go mod tidy`
# would also want the test servers of Flux's own tests, which the proxy
# does not serve.
build_controller() {
  local name="$1" module="github.com/fluxcd/$1"
  [[ -x "${BIN}/${name}" ]] && return
  local src="${DIR}/src/${name}"
  mkdir -p "${src}" "${BIN}"
  cd "${src}"
  if [[ ! -f go.mod ]]; then
    go mod init "parentrag.local/${name}" >/dev/null 2>&1
    {
      echo "require ${module} ${FLUX_VERSION}"
      replaces "$(module_json "${module}@${FLUX_VERSION}" GoMod)"
      echo "replace github.com/fluxcd/pkg/artifact => github.com/fluxcd/pkg/artifact ${ARTIFACT_VERSION}"
    } >> go.mod
    printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "${module}" > tools.go
  fi
  log "building ${name} ${FLUX_VERSION} (several minutes)"
  with_progress "flux: building ${name}" env CGO_ENABLED=0 go build -v -mod=mod -trimpath -ldflags "-s -w" -o "${BIN}/${name}.tmp" "${module}"
  mv "${BIN}/${name}.tmp" "${BIN}/${name}"
}

# copy_crds copies the CRDs each controller's module ships in
# config/crd/bases.
copy_crds() {
  [[ -d "${CRDS}" ]] && return
  mkdir -p "${CRDS}.tmp"
  for c in "${CONTROLLERS[@]}"; do
    cp "$(module_json "github.com/fluxcd/${c}@${FLUX_VERSION}" Dir)"/config/crd/bases/*.yaml "${CRDS}.tmp/"
  done
  chmod -R u+w "${CRDS}.tmp"
  mv "${CRDS}.tmp" "${CRDS}"
}

mkdir -p "${DIR}"
exec 9>"${DIR}.lock"
if ! have_all; then
  if ! flock -n 9; then
    log "another build of Flux's controllers holds ${DIR}.lock: waiting for it"
    flock 9
  fi
  if ! have_all; then
    start=$(date +%s)
    (copy_crds)
    for c in "${CONTROLLERS[@]}"; do
      (build_controller "${c}")
    done
    log "built in $(( $(date +%s) - start ))s into ${DIR}"
  fi
fi
log "ready: ${BIN}"
if ${print}; then
  echo "export PARENTRAG_SOURCE_CONTROLLER=${BIN}/source-controller"
  echo "export PARENTRAG_KUSTOMIZE_CONTROLLER=${BIN}/kustomize-controller"
  echo "export PARENTRAG_FLUX_CRDS=${CRDS}"
fi
