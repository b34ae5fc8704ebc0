#!/usr/bin/env bash
# Builds the repository's Dockerfile with buildah and imports the image into
# the node of make cluster-up (make cluster-image). Nothing is pulled or
# pushed: the Dockerfile's base images (BUILDER_IMAGE, RUNTIME_IMAGE build
# arguments, golang and distroless by default) are replaced by local
# equivalents assembled from scratch (this machine's Go toolchain; CA
# certificates and a nonroot user), and the Go build inside reads the host's
# module and build caches, mounted, with the module proxy off.
#
#   make cluster-image                  IMG=parentrag:cluster by default
#   hack/cluster/image.sh [IMAGE]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
# shellcheck source=lib.sh
source "${ROOT}/hack/cluster/lib.sh"
# shellcheck source=images.sh
source "${ROOT}/hack/cluster/images.sh"

IMG="${1:-${IMG:-parentrag:cluster}}"
START=$(date +%s)
need_root
command -v buildah >/dev/null || die "buildah is missing: run make cluster-up first (it installs it)"
[[ -S "${CONTAINERD_SOCK}" ]] || die "the node's containerd is not running (${CONTAINERD_SOCK}): run make cluster-up first"

build_operator_image "${IMG}"
take_lock
import_buildah_image "${IMG}" "${IMG}"
"${BUILDAH[@]}" rmi --prune >/dev/null 2>&1 || true
log "${IMG} built and imported in $(( $(date +%s) - START ))s"
