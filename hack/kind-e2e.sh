#!/usr/bin/env bash
# The cluster suite (test/cluster, the same one `make test-cluster` runs on
# the one-node cluster of make cluster-up) on a kind cluster: builds the
# image with Docker, creates or reuses a kind cluster, and runs the suite,
# which loads the image into kind's nodes, deploys the operator with
# config/cluster under its shipped RBAC, and runs the samples, rollouts
# under load through the Retriever's Service, the claims sample on a real
# Job and claim, an operator killed mid-build, Corpus deletion and suspend.
#
# Needs, on PATH: docker (with a running engine), kind v0.20 or later,
# kubectl v1.27 or later, go; network access for `docker build` (base
# images, Go modules) and for kind's node image on the first run.
#
# Usage: hack/kind-e2e.sh
#
# Environment:
#   CLUSTER_NAME   kind cluster to create or reuse   (default parentrag-e2e)
#   IMAGE          image to build and load           (default parentrag:e2e;
#                  not :latest, whose pods would try to pull it)
#   KEEP_CLUSTER   1 keeps a cluster this run created; otherwise it is
#                  deleted on exit. A cluster that already existed is kept.
#   KIND_NODE_IMAGE  node image for `kind create cluster --image` (optional)
#   TEST_RUN       a -run pattern for the suite (optional)
#
# Services are reached through the API server's service proxy
# (PARENTRAG_SERVICE_ACCESS=proxy): kind's ClusterIPs are not routed to the
# host. kind's default StorageClass provisions the claims sample's claims;
# its local-path provisioner binds ReadWriteOnce only, so the suite's claims
# test needs a provisioner with ReadWriteMany (or the sample set to
# ReadWriteOnce and one replica).
set -euo pipefail

CLUSTER_NAME="${CLUSTER_NAME:-parentrag-e2e}"
IMAGE="${IMAGE:-parentrag:e2e}"
KEEP_CLUSTER="${KEEP_CLUSTER:-0}"
KIND_NODE_IMAGE="${KIND_NODE_IMAGE:-}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"

log() { printf 'kind-e2e: %s\n' "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }

for tool in docker kind kubectl go; do
	command -v "${tool}" >/dev/null 2>&1 || die "${tool} is not on PATH (see the header of $0)"
done
docker info >/dev/null 2>&1 || die "no Docker engine answers (docker info failed); this script needs one"
case "${IMAGE}" in
*:latest | *@*) die "IMAGE=${IMAGE}: use a tag other than latest, so that kind's nodes use the loaded image" ;;
*:*) ;;
*) die "IMAGE=${IMAGE}: give a tag, e.g. parentrag:e2e" ;;
esac

workdir="$(mktemp -d "${TMPDIR:-/tmp}/parentrag-kind-e2e.XXXXXX")"
created_cluster=0
cleanup() {
	rm -rf "${workdir}"
	if [[ "${created_cluster}" == 1 && "${KEEP_CLUSTER}" != 1 ]]; then
		log "deleting kind cluster ${CLUSTER_NAME}"
		kind delete cluster --name "${CLUSTER_NAME}" >/dev/null 2>&1 || true
	fi
}
trap cleanup EXIT

log "building ${IMAGE} from the Dockerfile"
docker build -t "${IMAGE}" "${ROOT}"

if kind get clusters 2>/dev/null | grep -Fxq "${CLUSTER_NAME}"; then
	log "reusing kind cluster ${CLUSTER_NAME}"
else
	log "creating kind cluster ${CLUSTER_NAME}"
	kind create cluster --name "${CLUSTER_NAME}" ${KIND_NODE_IMAGE:+--image "${KIND_NODE_IMAGE}"} --wait 5m
	created_cluster=1
fi
kind get kubeconfig --name "${CLUSTER_NAME}" >"${workdir}/kubeconfig"

log "running the cluster suite"
cd "${ROOT}"
KUBECONFIG="${workdir}/kubeconfig" \
	PARENTRAG_TEST_IMAGE="${IMAGE}" \
	PARENTRAG_LOAD_IMAGE="kind load docker-image --name ${CLUSTER_NAME}" \
	PARENTRAG_SERVICE_ACCESS=proxy \
	KUBECTL="$(command -v kubectl)" \
	go test -tags cluster -count=1 -timeout 60m -v ${TEST_RUN:+-run "${TEST_RUN}"} ./test/cluster/
