#!/usr/bin/env bash
# Imports an image into the node of make cluster-up, for tests that build
# their own: an image archive (docker-archive or OCI, as written by
# `buildah push IMAGE docker-archive:FILE:NAME` or `docker save`), or the
# name of an image in cluster-image's buildah store.
#
#   hack/cluster/load-image.sh FILE.tar
#   hack/cluster/load-image.sh parentrag:cluster [NAME]
#
# Pods find it under its normalized name (parentrag:cluster is
# docker.io/library/parentrag:cluster); it must not be :latest, which the
# kubelet would try to pull.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
# shellcheck source=lib.sh
source "${ROOT}/hack/cluster/lib.sh"
# shellcheck source=images.sh
source "${ROOT}/hack/cluster/images.sh"

[[ $# -ge 1 ]] || die "usage: $0 FILE.tar | IMAGE [NAME]"
need_root
take_lock
if [[ -f "$1" ]]; then
  import_archive "$1"
elif have_buildah_image "$1"; then
  import_buildah_image "$1" "${2:-$1}"
else
  die "$1 is neither a file nor an image in buildah's store ${BUILDAH_DIR}/storage"
fi
