#!/usr/bin/env bash
# Runs the user's path on the cluster of make cluster-up: builds and imports
# the image (unless SKIP_IMAGE=1), deploys the operator from config/cluster,
# applies config/samples into a namespace, waits for the Corpus and the
# Retriever to be Ready and queries the Retriever's Service by its ClusterIP.
#
#   make cluster-up && hack/cluster/smoke.sh
#
# Environment: NAMESPACE (default parentrag-smoke, deleted at the end unless
# KEEP=1), TIMEOUT (seconds per wait, default 300), SKIP_IMAGE=1.
# Exits non-zero, with the operator's log and the namespace's events, on
# any failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
# shellcheck source=lib.sh
source "${ROOT}/hack/cluster/lib.sh"

NAMESPACE="${NAMESPACE:-parentrag-smoke}"
QUESTION="${QUESTION:-How does a rollout work?}"
START=$(date +%s)
step() { log "[$(( $(date +%s) - START ))s] $*"; }
k() { kubectl_admin "$@"; }

[[ -f "${KUBECONFIG_ADMIN}" ]] || die "no cluster: run make cluster-up first"
k get --raw /readyz >/dev/null 2>&1 || die "the apiserver does not answer: run make cluster-up"

diagnose() {
  err "smoke test failed; state follows"
  k -n parentrag-system get deploy,pods -o wide >&2 || true
  k -n "${NAMESPACE}" get corpus,retriever,pods,svc,events -o wide >&2 || true
  k -n parentrag-system logs deploy/parentrag-manager --tail=30 >&2 || true
}
trap 'rc=$?; (( rc == 0 )) || diagnose' EXIT

if [[ "${SKIP_IMAGE:-0}" != 1 ]]; then
  step "make cluster-image"
  "${ROOT}/hack/cluster/image.sh" parentrag:cluster
fi
step "deploying the operator: kubectl apply -k config/cluster"
k apply -k "${ROOT}/config/cluster" >/dev/null
k -n parentrag-system wait --for=condition=Available deployment/parentrag-manager --timeout="${TIMEOUT}s"
step "applying config/samples in namespace ${NAMESPACE}"
k create namespace "${NAMESPACE}" --dry-run=client -o yaml | k apply -f - >/dev/null
k -n "${NAMESPACE}" apply -k "${ROOT}/config/samples" >/dev/null
k -n "${NAMESPACE}" wait --for=condition=Ready corpus/parentrag-docs retriever/parentrag-docs --timeout="${TIMEOUT}s"
ip="$(k -n "${NAMESPACE}" get service parentrag-docs -o jsonpath='{.spec.clusterIP}')"
port="$(k -n "${NAMESPACE}" get service parentrag-docs -o jsonpath='{.spec.ports[0].port}')"
step "querying http://${ip}:${port}/v1/retrieve: ${QUESTION}"
answer=""
query() {
  answer="$(curl -sf -m 5 -XPOST "http://${ip}:${port}/v1/retrieve" -d "{\"query\":\"${QUESTION}\"}")" &&
    [[ "${answer}" == *'"results":[{'* ]]
}
# kube-proxy programs the Service within a second or so of the pods' readiness.
deadline=$(( $(date +%s) + 60 ))
until query; do
  (( $(date +%s) < deadline )) || die "no answer from http://${ip}:${port}/v1/retrieve: ${answer:-nothing}"
  sleep 1
done
echo "${answer}" | grep -o '"docId":"[^"]*","title":"[^"]*","score":[0-9.]*' | sed 's/^/  /'
step "smoke test passed"
if [[ "${KEEP:-0}" != 1 ]]; then
  k delete namespace "${NAMESPACE}" --wait=false >/dev/null
fi
