#!/usr/bin/env bash
# End-to-end check of parentrag on a real kind cluster: build the image,
# deploy the operator from config/default, apply the samples, query the
# Retriever's Service, change the handbook policy's child chunk size and
# query the new revision once the Retriever serves it.
#
# With WITH_MILVUS=1 it also installs a standalone Milvus into the cluster
# and runs the same checks with the docs Corpus's children in Milvus
# (config/samples/milvus), then checks in the Corpus's status.inventory and
# in Milvus itself that each revision's collection exists and that the
# Corpus's alias points at the serving one. THAT PATH IS UNVERIFIED: it was
# written without a Docker engine or a real Milvus at hand (the Milvus
# manifest follows Milvus's standalone_embed.sh: embedded etcd, local
# storage) and has never run. The same behaviour is tested without a
# cluster against a Milvus-wire-compatible server (controllers, `make test`).
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
# kind's node image on the first run (and for Milvus's image with
# WITH_MILVUS=1; Milvus wants a few GiB of memory on the node).
#
# Usage: hack/kind-e2e.sh
#        WITH_MILVUS=1 hack/kind-e2e.sh
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
#   WITH_MILVUS    1 installs Milvus standalone (Deployment and Service
#                  milvus in namespace milvus) and indexes the docs Corpus
#                  there (default 0: the embedded index)
#   MILVUS_IMAGE   Milvus image                      (default milvusdb/milvus:v2.6.5)
#   MILVUS_LOCAL_PORT  local port for port-forward to Milvus (default 19531)
set -euo pipefail

CLUSTER_NAME="${CLUSTER_NAME:-parentrag-e2e}"
NAMESPACE="${NAMESPACE:-parentrag-e2e}"
IMAGE="${IMAGE:-parentrag:e2e}"
KEEP_CLUSTER="${KEEP_CLUSTER:-0}"
TIMEOUT="${TIMEOUT:-600}"
LOCAL_PORT="${LOCAL_PORT:-18080}"
KIND_NODE_IMAGE="${KIND_NODE_IMAGE:-}"
WITH_MILVUS="${WITH_MILVUS:-0}"
MILVUS_IMAGE="${MILVUS_IMAGE:-milvusdb/milvus:v2.6.5}"
MILVUS_LOCAL_PORT="${MILVUS_LOCAL_PORT:-19531}"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
DEFAULT_DIR="${ROOT}/config/default"
SAMPLES_DIR="${ROOT}/config/samples"
MILVUS_SAMPLES_DIR="${ROOT}/config/samples/milvus"
CONTEXT="kind-${CLUSTER_NAME}"
# What config/default creates (namePrefix parentrag-).
OPERATOR_NS="parentrag-system"
OPERATOR_DEPLOYMENT="parentrag-manager"
# The samples' objects (config/samples).
POLICY="handbook"
CORPUS="parentrag-docs"
RETRIEVER="parentrag-docs"
QUESTION="Why split documents into parents and children?"
# Where WITH_MILVUS=1 installs Milvus; config/samples/milvus points the
# Corpus at milvus.milvus.svc:19530.
MILVUS_NS="milvus"
MILVUS_PORT=19530

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
case "${WITH_MILVUS}" in
0 | 1) ;;
*) die "WITH_MILVUS=${WITH_MILVUS}: use 1 (install Milvus) or 0" ;;
esac

workdir="$(mktemp -d "${TMPDIR:-/tmp}/parentrag-kind-e2e.XXXXXX")"
workdir="$(cd "${workdir}" && pwd -P)"
created_cluster=0
pf_pid=""
mpf_pid=""

stop_port_forward() {
	if [[ -n "${pf_pid}" ]]; then
		kill "${pf_pid}" 2>/dev/null || true
		wait "${pf_pid}" 2>/dev/null || true
		pf_pid=""
	fi
}

stop_milvus_port_forward() {
	if [[ -n "${mpf_pid}" ]]; then
		kill "${mpf_pid}" 2>/dev/null || true
		wait "${mpf_pid}" 2>/dev/null || true
		mpf_pid=""
	fi
}

cleanup() {
	local rc=$?
	stop_port_forward
	stop_milvus_port_forward
	if ((rc != 0)) && cluster_exists; then
		log "diagnostics after failure:"
		k get chunkingpolicies,corpora,retrievers -A -o wide >&2 || true
		k -n "${NAMESPACE}" get deployments,pods,services -o wide >&2 || true
		k -n "${OPERATOR_NS}" logs "deployment/${OPERATOR_DEPLOYMENT}" --tail=50 >&2 || true
		if [[ -s "${workdir}/port-forward.log" ]]; then
			log "port-forward log:"
			cat "${workdir}/port-forward.log" >&2 || true
		fi
		if [[ "${WITH_MILVUS}" == "1" ]]; then
			log "Milvus:"
			k -n "${NAMESPACE}" get corpus "${CORPUS}" -o 'jsonpath={.status.inventory}{"\n"}' >&2 || true
			k -n "${MILVUS_NS}" get deployments,pods,services -o wide >&2 || true
			k -n "${MILVUS_NS}" logs deployment/milvus --tail=50 >&2 || true
			if [[ -s "${workdir}/milvus-port-forward.log" ]]; then
				cat "${workdir}/milvus-port-forward.log" >&2 || true
			fi
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

# --- Milvus (WITH_MILVUS=1) ------------------------------------------------
# Milvus standalone as Milvus's scripts/standalone_embed.sh runs it: one
# container, `milvus run standalone`, etcd embedded (configured by
# embedEtcd.yaml) and local storage under /var/lib/milvus (an emptyDir
# here: the data goes with the pod). gRPC and the RESTful API share port
# 19530; /healthz answers on 9091. No authentication.
if [[ "${WITH_MILVUS}" == "1" ]]; then
	log "installing Milvus standalone (${MILVUS_IMAGE}) in namespace ${MILVUS_NS}"
	cat >"${workdir}/milvus.yaml" <<YAML
apiVersion: v1
kind: Namespace
metadata:
  name: ${MILVUS_NS}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: milvus-embed-etcd
  namespace: ${MILVUS_NS}
data:
  embedEtcd.yaml: |
    listen-client-urls: http://0.0.0.0:2379
    advertise-client-urls: http://0.0.0.0:2379
    quota-backend-bytes: 4294967296
    auto-compaction-mode: revision
    auto-compaction-retention: '1000'
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: milvus
  namespace: ${MILVUS_NS}
  labels:
    app: milvus
spec:
  replicas: 1
  strategy:
    type: Recreate
  selector:
    matchLabels:
      app: milvus
  template:
    metadata:
      labels:
        app: milvus
    spec:
      securityContext:
        seccompProfile:
          type: Unconfined
      containers:
      - name: milvus
        image: ${MILVUS_IMAGE}
        imagePullPolicy: IfNotPresent
        args: ["milvus", "run", "standalone"]
        env:
        - name: ETCD_USE_EMBED
          value: "true"
        - name: ETCD_DATA_DIR
          value: /var/lib/milvus/etcd
        - name: ETCD_CONFIG_PATH
          value: /milvus/configs/embedEtcd.yaml
        - name: COMMON_STORAGETYPE
          value: local
        - name: DEPLOY_MODE
          value: STANDALONE
        ports:
        - name: grpc
          containerPort: ${MILVUS_PORT}
        - name: health
          containerPort: 9091
        readinessProbe:
          httpGet:
            path: /healthz
            port: health
          periodSeconds: 5
          failureThreshold: 3
        startupProbe:
          httpGet:
            path: /healthz
            port: health
          periodSeconds: 5
          failureThreshold: 60
        resources:
          requests:
            cpu: 500m
            memory: 2Gi
        volumeMounts:
        - name: data
          mountPath: /var/lib/milvus
        - name: embed-etcd
          mountPath: /milvus/configs/embedEtcd.yaml
          subPath: embedEtcd.yaml
      volumes:
      - name: data
        emptyDir: {}
      - name: embed-etcd
        configMap:
          name: milvus-embed-etcd
---
apiVersion: v1
kind: Service
metadata:
  name: milvus
  namespace: ${MILVUS_NS}
spec:
  selector:
    app: milvus
  ports:
  - name: grpc
    port: ${MILVUS_PORT}
    targetPort: grpc
  - name: health
    port: 9091
    targetPort: health
YAML
	k apply -f "${workdir}/milvus.yaml"
	k -n "${MILVUS_NS}" rollout status deployment/milvus --timeout="${TIMEOUT}s"
fi

# --- samples ---------------------------------------------------------------
# With WITH_MILVUS=1, the samples with config/samples/milvus's Corpus in
# place of the default one (a patch by the same name) and its Secret, in one
# apply, so the Corpus is never built with the embedded index. kustomize
# loads no file from outside a kustomization's folder: copy them in.
samples="${SAMPLES_DIR}"
if [[ "${WITH_MILVUS}" == "1" ]]; then
	samples="${workdir}/samples"
	mkdir -p "${samples}"
	cp "${MILVUS_SAMPLES_DIR}/milvus-credentials.yaml" "${MILVUS_SAMPLES_DIR}/parentrag_v1alpha1_corpus.yaml" "${samples}/"
	SAMPLES_BASE="$(relpath "${samples}" "${SAMPLES_DIR}")"
	cat >"${samples}/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
- ${SAMPLES_BASE}
- milvus-credentials.yaml
patches:
- path: parentrag_v1alpha1_corpus.yaml
YAML
fi
log "applying the samples in namespace ${NAMESPACE}"
k create namespace "${NAMESPACE}" --dry-run=client -o yaml | k apply -f -
k apply -n "${NAMESPACE}" -k "${samples}"

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

# milvus_name joins Kubernetes names into a Milvus name as the operator
# does (api/v1alpha1/corpus_funcs.go): every character but a letter, a
# digit or "_" becomes "_", and a leading digit gets a "_" in front.
milvus_name() {
	local IFS=_ name
	name="$*"
	name="${name//[^A-Za-z0-9_]/_}"
	if [[ "${name}" =~ ^[0-9] ]]; then
		name="_${name}"
	fi
	printf '%s\n' "${name}"
}

# milvus_post PATH BODY posts BODY to Milvus's RESTful API (v2) through the
# port-forward and prints the answer.
milvus_post() {
	curl -fsS -X POST -H 'Content-Type: application/json' --data "$2" "http://127.0.0.1:${MILVUS_LOCAL_PORT}$1"
}

# start_milvus_port_forward forwards MILVUS_LOCAL_PORT to the milvus
# Service and waits until its RESTful API answers.
start_milvus_port_forward() {
	stop_milvus_port_forward
	k -n "${MILVUS_NS}" port-forward svc/milvus "${MILVUS_LOCAL_PORT}:${MILVUS_PORT}" >"${workdir}/milvus-port-forward.log" 2>&1 &
	mpf_pid=$!
	local i
	for i in $(seq 1 30); do
		if milvus_post /v2/vectordb/collections/list '{}' >/dev/null 2>&1; then
			return 0
		fi
		kill -0 "${mpf_pid}" 2>/dev/null || break
		sleep 1
	done
	die "port-forward to svc/milvus did not answer on /v2/vectordb/collections/list after ${i}s"
}

# check_milvus ACTIVE [RETAINED] checks, in the Corpus's status.inventory
# and in Milvus, that the collections of revisions ACTIVE (and RETAINED,
# kept by retainRevisions) exist and that the Corpus's alias points at
# ACTIVE's. The alias moves once every Retriever serves ACTIVE, which
# wait_serving saw, so the inventory is given TIMEOUT to catch up.
check_milvus() {
	local alias coll c answer inv_alias inv_colls ok deadline=$((SECONDS + TIMEOUT))
	local want=()
	alias="$(milvus_name "${NAMESPACE}" "${CORPUS}")"
	coll="$(milvus_name "${NAMESPACE}" "${CORPUS}" "$1")"
	want+=("${coll}")
	if [[ -n "${2:-}" ]]; then
		want+=("$(milvus_name "${NAMESPACE}" "${CORPUS}" "$2")")
	fi
	while :; do
		inv_alias="$(jp corpus "${CORPUS}" '{.status.inventory.alias.name}={.status.inventory.alias.collection}')"
		inv_colls="$(jp corpus "${CORPUS}" '{range .status.inventory.collections[*]}{.name}{"\n"}{end}')"
		ok=1
		[[ "${inv_alias}" == "${alias}=${coll}" ]] || ok=0
		for c in "${want[@]}"; do
			grep -Fxq -- "${c}" <<<"${inv_colls}" || ok=0
		done
		((ok)) && break
		((SECONDS < deadline)) || die "status.inventory: alias ${inv_alias:-none}, collections ${inv_colls//$'\n'/ }; want alias ${alias}=${coll} and collections ${want[*]}"
		sleep 2
	done
	start_milvus_port_forward
	for c in "${want[@]}"; do
		answer="$(milvus_post /v2/vectordb/collections/has "{\"collectionName\":\"${c}\"}")" || die "asking Milvus for collection ${c} failed"
		grep -Eq '"has": *true' <<<"${answer}" || die "Milvus has no collection ${c}: ${answer}"
	done
	answer="$(milvus_post /v2/vectordb/aliases/describe "{\"aliasName\":\"${alias}\"}")" || die "asking Milvus for alias ${alias} failed"
	grep -Eq "\"collectionName\": *\"${coll}\"" <<<"${answer}" || die "Milvus alias ${alias} does not point at ${coll}: ${answer}"
	stop_milvus_port_forward
	log "Milvus holds collections ${want[*]}; alias ${alias} points at ${coll}"
}

k wait -n "${NAMESPACE}" --for=condition=Ready --timeout="${TIMEOUT}s" "corpus/${CORPUS}"
k wait -n "${NAMESPACE}" --for=condition=Ready --timeout="${TIMEOUT}s" "retriever/${RETRIEVER}"
first="$(wait_serving "")" || die "the Retriever did not serve the Corpus's revision"
log "serving revision ${first}"
k -n "${NAMESPACE}" rollout status "deployment/${RETRIEVER}" --timeout="${TIMEOUT}s"
ask "${first}" >"${workdir}/answer-1.json"
if [[ "${WITH_MILVUS}" == "1" ]]; then
	check_milvus "${first}"
fi

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
if [[ "${WITH_MILVUS}" == "1" ]]; then
	# retainRevisions 2 keeps the first revision's collection.
	check_milvus "${second}" "${first}"
fi

with=""
[[ "${WITH_MILVUS}" == "1" ]] && with=" (children in Milvus)"
log "PASS: revision ${first} answered, then ${second} after the chunk size change${with}"
