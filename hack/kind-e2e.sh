#!/usr/bin/env bash
# End-to-end check of parentrag on a real kind cluster: build the image,
# deploy the operator from config/default, apply the samples, query the
# Retriever's Service, change the handbook policy's child chunk size and
# query the new revision once the Retriever serves it.
#
# THIS SCRIPT CANNOT RUN ON THE PROJECT'S CI MACHINES: they have no Docker
# engine, so neither `docker build` nor kind works there. CI covers the same
# path without containers (test/e2e, `make test`) and checks the manifests
# without a cluster (config/manifests_test.go). Run this one on a workstation.
#
# Needs, on PATH:
#   docker    with a running engine (builds the image; kind runs on it)
#   kind      v0.20 or later
#   kubectl   v1.27 or later (apply -k, wait, rollout status, port-forward)
#   curl
#   jq        optional: the answers are checked with grep without it
# and network access for `docker build` (base images, Go modules) and for
# kind's node image on the first run.
#
# Usage: hack/kind-e2e.sh
#
# Environment:
#   CLUSTER_NAME   kind cluster to create or reuse   (default parentrag-e2e)
#   NAMESPACE      namespace for the samples         (default parentrag-e2e)
#   IMAGE          image to build and load           (default parentrag:e2e;
#                  not :latest, whose pods would try to pull it)
#   KEEP_CLUSTER   1 keeps a cluster this run created; otherwise it is
#                  deleted on exit. A cluster that already existed is reused
#                  and always kept.
#   TIMEOUT        seconds for each wait             (default 600)
#   LOCAL_PORT     local port for port-forward       (default 18080)
#   KIND_NODE_IMAGE  node image for `kind create cluster --image` (optional)
set -euo pipefail

CLUSTER_NAME="${CLUSTER_NAME:-parentrag-e2e}"
NAMESPACE="${NAMESPACE:-parentrag-e2e}"
IMAGE="${IMAGE:-parentrag:e2e}"
KEEP_CLUSTER="${KEEP_CLUSTER:-0}"
TIMEOUT="${TIMEOUT:-600}"
LOCAL_PORT="${LOCAL_PORT:-18080}"
KIND_NODE_IMAGE="${KIND_NODE_IMAGE:-}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
DEFAULT_DIR="${ROOT}/config/default"
SAMPLES_DIR="${ROOT}/config/samples"
CONTEXT="kind-${CLUSTER_NAME}"
# What config/default creates (namePrefix parentrag-).
OPERATOR_NS="parentrag-system"
OPERATOR_DEPLOYMENT="parentrag-manager"
# The samples' objects (config/samples).
POLICY="handbook"
CORPUS="parentrag-docs"
RETRIEVER="parentrag-docs"
QUESTION="Why split documents into parents and children?"

log() { printf 'kind-e2e: %s\n' "$*" >&2; }
die() { log "FAIL: $*"; exit 1; }
k() { kubectl --context "${CONTEXT}" "$@"; }
# cluster_exists: whether kind knows CLUSTER_NAME (no grep -q in a pipe,
# which pipefail would turn into "no" when kind gets SIGPIPE).
cluster_exists() {
	local clusters
	clusters="$(kind get clusters 2>/dev/null || true)"
	grep -Fxq "${CLUSTER_NAME}" <<<"${clusters}"
}

# relpath FROM TO prints directory TO relative to directory FROM; both are
# absolute physical paths. (kustomize refuses an absolute path to a base.)
relpath() {
	local from="$1" to="$2" up=""
	while [[ "${from}" != "/" && "${to}" != "${from}" && "${to#"${from}/"}" == "${to}" ]]; do
		from="$(dirname "${from}")"
		up="../${up}"
	done
	if [[ "${to}" == "${from}" ]]; then
		printf '%s\n' "${up:-.}"
	elif [[ "${from}" == "/" ]]; then
		printf '%s%s\n' "${up}" "${to#/}"
	else
		printf '%s%s\n' "${up}" "${to#"${from}/"}"
	fi
}

for tool in docker kind kubectl curl; do
	command -v "${tool}" >/dev/null 2>&1 || die "${tool} is not on PATH (see the header of $0)"
done
docker info >/dev/null 2>&1 || die "no Docker engine answers (docker info failed); this script needs one"
case "${IMAGE}" in
*:latest | *@*) die "IMAGE=${IMAGE}: use a tag other than latest, so that kind's nodes use the loaded image" ;;
*:*) ;;
*) die "IMAGE=${IMAGE}: give a tag, e.g. parentrag:e2e" ;;
esac

workdir="$(mktemp -d "${TMPDIR:-/tmp}/parentrag-kind-e2e.XXXXXX")"
workdir="$(cd "${workdir}" && pwd -P)"
created_cluster=0
pf_pid=""

stop_port_forward() {
	if [[ -n "${pf_pid}" ]]; then
		kill "${pf_pid}" 2>/dev/null || true
		wait "${pf_pid}" 2>/dev/null || true
		pf_pid=""
	fi
}

cleanup() {
	local rc=$?
	stop_port_forward
	if ((rc != 0)) && cluster_exists; then
		log "diagnostics after failure:"
		k get chunkingpolicies,corpora,retrievers -A -o wide >&2 || true
		k -n "${NAMESPACE}" get deployments,pods,services -o wide >&2 || true
		k -n "${OPERATOR_NS}" logs "deployment/${OPERATOR_DEPLOYMENT}" --tail=50 >&2 || true
		if [[ -s "${workdir}/port-forward.log" ]]; then
			log "port-forward log:"
			cat "${workdir}/port-forward.log" >&2 || true
		fi
	fi
	rm -rf "${workdir}"
	if ((created_cluster)); then
		if [[ "${KEEP_CLUSTER}" == "1" ]]; then
			log "keeping cluster ${CLUSTER_NAME} (kubectl --context ${CONTEXT}); delete it with: kind delete cluster --name ${CLUSTER_NAME}"
		else
			log "deleting cluster ${CLUSTER_NAME} (KEEP_CLUSTER=1 keeps it)"
			kind delete cluster --name "${CLUSTER_NAME}" >&2 || true
		fi
	fi
	exit "${rc}"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- cluster ---------------------------------------------------------------
if cluster_exists; then
	log "reusing kind cluster ${CLUSTER_NAME}"
else
	log "creating kind cluster ${CLUSTER_NAME}"
	create=(kind create cluster --name "${CLUSTER_NAME}" --wait "${TIMEOUT}s")
	[[ -n "${KIND_NODE_IMAGE}" ]] && create+=(--image "${KIND_NODE_IMAGE}")
	created_cluster=1
	"${create[@]}"
fi
k cluster-info >/dev/null

# --- image -----------------------------------------------------------------
log "building ${IMAGE}"
docker build -t "${IMAGE}" "${ROOT}"
log "loading ${IMAGE} into ${CLUSTER_NAME}"
kind load docker-image "${IMAGE}" --name "${CLUSTER_NAME}"

# --- operator --------------------------------------------------------------
# config/default with the image just loaded, for the manager container and
# for the query pods it creates (PARENTRAG_IMAGE): a kustomize `images:`
# entry would change only the container. config/manifests_test.go renders
# this very heredoc and checks both.
BASE="$(relpath "${workdir}" "${DEFAULT_DIR}")"
cat >"${workdir}/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- ${BASE}
patches:
- patch: |-
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: parentrag-manager
      namespace: parentrag-system
    spec:
      template:
        spec:
          containers:
          - name: manager
            image: ${IMAGE}
            imagePullPolicy: IfNotPresent
            env:
            - name: PARENTRAG_IMAGE
              value: ${IMAGE}
EOF
log "deploying the operator"
k apply -k "${workdir}"
k wait --for=condition=Established --timeout="${TIMEOUT}s" \
	crd/chunkingpolicies.parentrag.io crd/corpora.parentrag.io crd/retrievers.parentrag.io
k -n "${OPERATOR_NS}" rollout status "deployment/${OPERATOR_DEPLOYMENT}" --timeout="${TIMEOUT}s"

# --- samples ---------------------------------------------------------------
log "applying the samples in namespace ${NAMESPACE}"
k create namespace "${NAMESPACE}" --dry-run=client -o yaml | k apply -f -
k apply -n "${NAMESPACE}" -k "${SAMPLES_DIR}"

# jp KIND NAME JSONPATH prints a field of a sample object ("" when unset);
# kubectl ignores -n for the cluster-scoped ChunkingPolicy.
jp() {
	k -n "${NAMESPACE}" get "$1" "$2" -o "jsonpath=$3" 2>/dev/null || true
}

# wait_serving PREVIOUS waits until the policy's current spec is built into
# the Corpus's active revision, that revision is not PREVIOUS, and the
# Retriever serves it on every replica; it prints the revision.
wait_serving() {
	local previous="$1" deadline=$((SECONDS + TIMEOUT))
	local gen obs policy_rev active active_policy serving
	while ((SECONDS < deadline)); do
		gen="$(jp chunkingpolicy "${POLICY}" '{.metadata.generation}')"
		obs="$(jp chunkingpolicy "${POLICY}" '{.status.observedGeneration}')"
		policy_rev="$(jp chunkingpolicy "${POLICY}" '{.status.revision}')"
		active="$(jp corpus "${CORPUS}" '{.status.activeRevision.name}')"
		active_policy="$(jp corpus "${CORPUS}" '{.status.activeRevision.policyRevision}')"
		serving="$(jp retriever "${RETRIEVER}" '{.status.servingRevision}')"
		if [[ -n "${policy_rev}" && "${gen}" == "${obs}" && "${active_policy}" == "${policy_rev}" &&
			-n "${active}" && "${active}" != "${previous}" && "${serving}" == "${active}" ]]; then
			printf '%s\n' "${serving}"
			return 0
		fi
		sleep 2
	done
	log "timed out after ${TIMEOUT}s: policy generation ${gen:-?}/${obs:-?} revision ${policy_rev:-none};" \
		"corpus active ${active:-none} (policy ${active_policy:-none}); retriever serving ${serving:-none}; previous ${previous:-none}"
	return 1
}

# start_port_forward forwards LOCAL_PORT to the Retriever's Service and
# waits until the port answers.
start_port_forward() {
	stop_port_forward
	local port
	port="$(k -n "${NAMESPACE}" get service "${RETRIEVER}" -o 'jsonpath={.spec.ports[?(@.name=="http")].port}')"
	[[ -n "${port}" ]] || die "Service ${RETRIEVER} has no port named http"
	k -n "${NAMESPACE}" port-forward "svc/${RETRIEVER}" "${LOCAL_PORT}:${port}" >"${workdir}/port-forward.log" 2>&1 &
	pf_pid=$!
	local i
	for i in $(seq 1 30); do
		if curl -fsS -o /dev/null "http://127.0.0.1:${LOCAL_PORT}/readyz" 2>/dev/null; then
			return 0
		fi
		kill -0 "${pf_pid}" 2>/dev/null || break
		sleep 1
	done
	die "port-forward to svc/${RETRIEVER} did not answer on /readyz after ${i}s"
}

# ask REVISION queries the Service through a fresh port-forward until an
# answer comes from REVISION with at least one result, and prints it.
ask() {
	local want="$1" body answer rev count attempt
	body="$(printf '{"query":"%s","maxParents":3}' "${QUESTION}")"
	for attempt in 1 2 3 4 5 6 7 8 9 10; do
		start_port_forward
		answer="$(curl -fsS -X POST -H 'Content-Type: application/json' --data "${body}" \
			"http://127.0.0.1:${LOCAL_PORT}/v1/retrieve" || true)"
		if command -v jq >/dev/null 2>&1; then
			rev="$(jq -r '.revision // empty' <<<"${answer}" 2>/dev/null || true)"
			count="$(jq -r '(.results // []) | length' <<<"${answer}" 2>/dev/null || echo 0)"
		else
			rev="$(grep -o '"revision":"[^"]*"' <<<"${answer}" | head -n1 | cut -d'"' -f4 || true)"
			count="$(grep -o '"parentId":' <<<"${answer}" | wc -l | tr -d ' ' || true)"
		fi
		[[ "${count}" =~ ^[0-9]+$ ]] || count=0
		if [[ "${rev}" == "${want}" ]] && ((count > 0)); then
			log "revision ${rev}: ${count} results"
			printf '%s\n' "${answer}"
			return 0
		fi
		# A pod of the previous revision may still be terminating behind
		# the port-forward; pick a pod again.
		log "attempt ${attempt}: answer from revision ${rev:-none} with ${count:-0} results, want ${want}"
		sleep 3
	done
	die "no answer with results from revision ${want}; last answer: ${answer:-none}"
}

k wait -n "${NAMESPACE}" --for=condition=Ready --timeout="${TIMEOUT}s" "corpus/${CORPUS}"
k wait -n "${NAMESPACE}" --for=condition=Ready --timeout="${TIMEOUT}s" "retriever/${RETRIEVER}"
first="$(wait_serving "")" || die "the Retriever did not serve the Corpus's revision"
log "serving revision ${first}"
k -n "${NAMESPACE}" rollout status "deployment/${RETRIEVER}" --timeout="${TIMEOUT}s"
ask "${first}" >"${workdir}/answer-1.json"

# --- change the policy -----------------------------------------------------
# A smaller child chunk size makes a new policy revision, so a new Corpus
# revision, so a rollout. Pick a size the policy does not have yet, so that
# a reused cluster also moves.
current="$(jp chunkingpolicy "${POLICY}" '{.spec.child.chunkSize}')"
size=200
[[ "${current}" == "${size}" ]] && size=250
log "changing ChunkingPolicy ${POLICY} child.chunkSize ${current:-default} -> ${size}"
k patch chunkingpolicy "${POLICY}" --type merge \
	-p "{\"spec\":{\"child\":{\"chunkSize\":${size},\"chunkOverlap\":20}}}"
second="$(wait_serving "${first}")" || die "the Retriever did not move to a new revision"
log "serving revision ${second} (was ${first})"
k wait -n "${NAMESPACE}" --for=condition=Ready --timeout="${TIMEOUT}s" "retriever/${RETRIEVER}"
k -n "${NAMESPACE}" rollout status "deployment/${RETRIEVER}" --timeout="${TIMEOUT}s"
ask "${second}" >"${workdir}/answer-2.json"

log "PASS: revision ${first} answered, then ${second} after the chunk size change"
