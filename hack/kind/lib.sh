# What hack/kind-e2e.sh and hack/kind/demo.sh share: a Docker engine, kind
# built from Go modules, the node image and a kind cluster on it. Sourced
# after hack/cluster/lib.sh and hack/kind/versions.sh, with ROOT set and
# log and die defined.
# shellcheck shell=bash

KIND="${ROOT}/bin/kind"

# docker_engine makes $DOCKER_HOST answer: the engine already there, or one
# started by hack/kind/docker.sh.
docker_engine() {
  command -v docker >/dev/null || die "docker is not on PATH: apt-get install -y docker.io"
  docker info >/dev/null 2>&1 && return
  log "no Docker engine answers at ${DOCKER_HOST:-the default socket}: starting one (hack/kind/docker.sh)"
  export "$("${ROOT}/hack/kind/docker.sh" start)"
  docker info >/dev/null 2>&1 || die "the Docker engine of hack/kind/docker.sh does not answer"
}

# kind_binary builds kind at KIND_VERSION into ./bin unless it is there.
kind_binary() {
  if [[ -x "${KIND}" ]] && "${KIND}" version | grep -q "^kind ${KIND_VERSION} "; then
    return
  fi
  log "building kind ${KIND_VERSION} into ./bin"
  GOBIN="${ROOT}/bin" go install "sigs.k8s.io/kind@${KIND_VERSION}"
}

# kind_cluster NAME DIR creates the kind cluster NAME on the node image
# (KIND_NODE_IMAGE, or hack/kind/node-image.sh's) unless it exists, and
# writes its kubeconfig to DIR/kubeconfig. It prints 1 when it created the
# cluster, 0 when it was there.
kind_cluster() {
  local name="$1" dir="$2" node_image="${KIND_NODE_IMAGE:-}"
  if "${KIND}" get clusters 2>/dev/null | grep -Fxq "${name}"; then
    log "reusing kind cluster ${name}"
    "${KIND}" get kubeconfig --name "${name}" >"${dir}/kubeconfig"
    echo 0
    return
  fi
  [[ -n "${node_image}" ]] || node_image="$("${ROOT}/hack/kind/node-image.sh")"
  sed "s/@ETCD_IMAGE_TAG@/${ETCD_IMAGE_TAG}/" "${ROOT}/hack/kind/cluster.yaml" >"${dir}/cluster.yaml"
  log "creating kind cluster ${name} on ${node_image}"
  "${KIND}" create cluster --name "${name}" --image "${node_image}" --config "${dir}/cluster.yaml" \
    --kubeconfig "${dir}/kubeconfig" --wait 5m >&2
  echo 1
}
