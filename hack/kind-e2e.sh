#!/usr/bin/env bash
# The cluster suite (test/cluster, the same one `make test-cluster` runs on
# the one-node cluster of make cluster-up) on a kind cluster: builds the
# operator's image, creates or reuses a kind cluster, and runs the suite,
# which loads the image into kind's node, deploys the operator with an
# overlay of config/default under its shipped RBAC, and runs the samples,
# rollouts under load through the Retriever's Service, the claims sample on
# a real Job and claim, an operator killed mid-build, Corpus deletion and
# suspend.
#
# Nothing is downloaded but Go modules and Debian packages:
#   - kind is built from Go modules into ./bin (hack/kind/versions.sh);
#   - the node image is assembled here (hack/kind/node-image.sh: Debian's
#     containerd, runc and CNI plugins, kubelet, kubeadm and the control
#     plane built from Go modules), unless KIND_NODE_IMAGE names one;
#   - the operator's image is built offline from the Dockerfile with buildah
#     (hack/kind/image.sh), as make cluster-image does.
# Without a Docker engine at $DOCKER_HOST, and as root with Debian's
# docker.io installed, it starts one of its own (hack/kind/docker.sh) that
# leaves the one-node cluster alone.
#
# Usage: hack/kind-e2e.sh
#
# Environment:
#   CLUSTER_NAME     kind cluster to create or reuse   (default parentrag-e2e)
#   IMAGE            image to build and load           (default parentrag:e2e;
#                    not :latest, whose pods would try to pull it)
#   KEEP_CLUSTER     1 keeps a cluster this run created; otherwise it is
#                    deleted on exit. A cluster that already existed is kept.
#   KIND_NODE_IMAGE  node image for `kind create cluster --image` (default:
#                    the one hack/kind/node-image.sh assembles)
#   TEST_RUN         a -run pattern for the suite (optional)
#
# Services are reached through the API server's service proxy
# (PARENTRAG_SERVICE_ACCESS=proxy): kind's ClusterIPs are not routed to the
# host. The cluster's StorageClass provisions host-path volumes, which any
# number of pods on the one node can mount, as on the one-node cluster.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
# shellcheck source=cluster/lib.sh
source "${ROOT}/hack/cluster/lib.sh"
# shellcheck source=kind/versions.sh
source "${ROOT}/hack/kind/versions.sh"

CLUSTER_NAME="${CLUSTER_NAME:-parentrag-e2e}"
IMAGE="${IMAGE:-parentrag:e2e}"
KEEP_CLUSTER="${KEEP_CLUSTER:-0}"

log() { printf 'kind-e2e: %s\n' "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }
# shellcheck source=kind/lib.sh
source "${ROOT}/hack/kind/lib.sh"

case "${IMAGE}" in
*:latest | *@*) die "IMAGE=${IMAGE}: use a tag other than latest, so that kind's nodes use the loaded image" ;;
*:*) ;;
*) die "IMAGE=${IMAGE}: give a tag, e.g. parentrag:e2e" ;;
esac
command -v go >/dev/null || die "go is not on PATH"

docker_engine
kind_binary
KUBECTL_BIN="$("${ROOT}/hack/cluster/node-binaries.sh")/kubectl"

workdir="$(mktemp -d "${TMPDIR:-/tmp}/parentrag-kind-e2e.XXXXXX")"
created_cluster=0
cleanup() {
	rm -rf "${workdir}"
	if [[ "${created_cluster}" == 1 && "${KEEP_CLUSTER}" != 1 ]]; then
		log "deleting kind cluster ${CLUSTER_NAME}"
		"${KIND}" delete cluster --name "${CLUSTER_NAME}" >/dev/null 2>&1 || true
	fi
}
trap cleanup EXIT

start=$(date +%s)
"${ROOT}/hack/kind/image.sh" "${IMAGE}"
created_cluster="$(kind_cluster "${CLUSTER_NAME}" "${workdir}")"
log "image and cluster ready in $(( $(date +%s) - start ))s; running the cluster suite"

cd "${ROOT}"
suite_start=$(date +%s)
KUBECONFIG="${workdir}/kubeconfig" \
	PARENTRAG_TEST_IMAGE="${IMAGE}" \
	PARENTRAG_LOAD_IMAGE="${KIND} load docker-image --name ${CLUSTER_NAME}" \
	PARENTRAG_SERVICE_ACCESS=proxy \
	KUBECTL="${KUBECTL_BIN}" \
	go test -tags cluster -count=1 -timeout 60m -v ${TEST_RUN:+-run "${TEST_RUN}"} ./test/cluster/
log "cluster suite passed in $(( $(date +%s) - suite_start ))s"
