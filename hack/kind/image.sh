#!/usr/bin/env bash
# Builds the repository's Dockerfile offline, as make cluster-image does
# (buildah, local base images, the host's Go caches), and loads the image
# into the Docker engine at $DOCKER_HOST, from where kind load docker-image
# takes it into kind's nodes.
#
#   hack/kind/image.sh IMAGE
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
# shellcheck source=../cluster/lib.sh
source "${ROOT}/hack/cluster/lib.sh"
# shellcheck source=../cluster/images.sh
source "${ROOT}/hack/cluster/images.sh"
log() { echo "kind-image: $*" >&2; }

IMG="${1:?usage: $0 IMAGE}"
START=$(date +%s)
command -v buildah >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y buildah >&2
build_operator_image "${IMG}"
mkdir -p "${BUILDAH_DIR}/tmp"
archive="$(mktemp -p "${BUILDAH_DIR}/tmp" kind-image-XXXXXX.tar)"
rm -f "${archive}"
"${BUILDAH[@]}" push --quiet "${IMG}" "docker-archive:${archive}:$(normalize_ref "${IMG}")" >/dev/null
docker load -i "${archive}" >&2
rm -f "${archive}"
log "${IMG} built and loaded into Docker in $(( $(date +%s) - START ))s"
