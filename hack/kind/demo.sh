#!/usr/bin/env bash
# make demo where Docker is present: parentrag's operator on a kind
# cluster, as a user runs it. It builds the operator's image (offline,
# hack/kind/image.sh) and loads it into a kind cluster (created on the node
# image of hack/kind/node-image.sh unless it exists), deploys config/cluster
# (CRDs, RBAC, the operator running parentrag:cluster), applies
# config/samples (parentrag's own docs as the corpus), asks a question
# through the Retriever's Service, switches the Corpus to a finer chunking
# policy, waits for the new revision to take over and asks again. The
# cluster is kept; the last lines say how to use it and remove it.
#
#   make demo                       (or hack/kind/demo.sh)
#
# Environment: CLUSTER_NAME (default parentrag-demo), KIND_NODE_IMAGE.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
# shellcheck source=../cluster/lib.sh
source "${ROOT}/hack/cluster/lib.sh"
# shellcheck source=versions.sh
source "${ROOT}/hack/kind/versions.sh"
log() { printf '\n==> %s\n' "$*" >&2; }
die() { printf 'demo: FAIL: %s\n' "$*" >&2; exit 1; }
# shellcheck source=lib.sh
source "${ROOT}/hack/kind/lib.sh"

CLUSTER_NAME="${CLUSTER_NAME:-parentrag-demo}"
NS=parentrag-demo
IMAGE=parentrag:cluster
QUESTION="Why split documents into parents and children?"
STATE="${CACHE_ROOT}/kind/${CLUSTER_NAME}"
START=$(date +%s)

# k runs the kubectl built with the node on the demo's cluster.
k() { "${KUBECTL_BIN}" --kubeconfig "${STATE}/kubeconfig" "$@"; }

# ask sends the question to the Retriever's Service through the API
# server's service proxy and prints the revision and the parents' ids.
ask() {
  printf '{"query":"%s","maxParents":3}' "${QUESTION}" >"${STATE}/query.json"
  k create --raw "/api/v1/namespaces/${NS}/services/parentrag-docs:8080/proxy/v1/retrieve" -f "${STATE}/query.json" |
    jq -r '"revision \(.revision)", (.results[] | "  \(.score | tostring | .[0:6])  \(.docId)  \(.headingPath // [] | join(" > "))")'
}

# active prints the Corpus's active revision.
active() { k -n "${NS}" get corpus parentrag-docs -o jsonpath='{.status.activeRevision.name}'; }

docker_engine
kind_binary
KUBECTL_BIN="$("${ROOT}/hack/cluster/node-binaries.sh")/kubectl"
mkdir -p "${STATE}"

log "building ${IMAGE} from the Dockerfile (offline)"
"${ROOT}/hack/kind/image.sh" "${IMAGE}"
log "kind cluster ${CLUSTER_NAME}"
kind_cluster "${CLUSTER_NAME}" "${STATE}" >/dev/null
"${KIND}" load docker-image --name "${CLUSTER_NAME}" "${IMAGE}" >&2

log "deploying the operator: kubectl apply -k config/cluster"
k apply --server-side -k "${ROOT}/config/cluster" >/dev/null
k -n parentrag-system rollout restart deployment/parentrag-manager >/dev/null
k -n parentrag-system rollout status deployment/parentrag-manager --timeout=180s >&2

log "applying config/samples in ${NS}: the docs Corpus, its policy and a Retriever"
k create namespace "${NS}" --dry-run=client -o yaml | k apply -f - >/dev/null
k apply -n "${NS}" -k "${ROOT}/config/samples" >/dev/null
k -n "${NS}" wait --for=condition=Ready corpus/parentrag-docs retriever/parentrag-docs --timeout=600s >&2
first="$(active)"
log "asking: ${QUESTION}"
ask

log "switching the Corpus to the finer policy parentrag-sample-handbook-fine"
k -n "${NS}" patch corpus parentrag-docs --type merge -p '{"spec":{"chunkingPolicyRef":{"name":"parentrag-sample-handbook-fine"}}}' >/dev/null
for _ in $(seq 300); do
  second="$(active)"
  [[ -n "${second}" && "${second}" != "${first}" ]] && break
  sleep 2
done
[[ "${second}" != "${first}" ]] || die "no new revision after 10 minutes"
k -n "${NS}" wait --for=condition=Ready corpus/parentrag-docs retriever/parentrag-docs --timeout=600s >&2
until [[ "$(k -n "${NS}" get retriever parentrag-docs -o jsonpath='{.status.servingRevision}')" == "${second}" ]]; do sleep 2; done
log "asking again, now served by ${second}"
ask

cat <<EOF

==> done in $(( $(date +%s) - START ))s: revision ${first} served, then ${second} took over.

Try next:
  export KUBECONFIG=${STATE}/kubeconfig PATH=$(dirname "${KUBECTL_BIN}"):\$PATH
  kubectl -n ${NS} get corpus,retriever,chunkingpolicy
  kubectl -n ${NS} describe corpus parentrag-docs
Remove it:
  ${KIND} delete cluster --name ${CLUSTER_NAME}
EOF
