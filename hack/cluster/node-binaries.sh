#!/usr/bin/env bash
# Builds the node's binaries, kubelet and kube-proxy, and kubectl, at the
# control plane's Kubernetes version, from hack/control-plane.sh's scratch
# module (k8s.io/kubernetes with its staging modules replaced by their
# published versions) into the same cache bin directory.
#
#   hack/cluster/node-binaries.sh     build what is missing (about 12 minutes
#                                     cold on two cores), print the bin dir
#
# It first runs hack/control-plane.sh (which builds etcd and the control
# plane, or returns at once), then adds a second tools file to the scratch
# module under the same build lock, so concurrent runs wait for each other.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
# shellcheck source=lib.sh
source "${ROOT}/hack/cluster/lib.sh"
# shellcheck source=../progress.sh
source "${ROOT}/hack/progress.sh"

NODE_BINS=(kubelet kube-proxy kubectl)

have_node_bins() {
  local b
  for b in "${NODE_BINS[@]}"; do
    [[ -x "${BIN}/${b}" ]] || return 1
  done
}

"${ROOT}/hack/control-plane.sh" >&2

if ! have_node_bins; then
  exec 8>"${CP_DIR}.lock"
  if ! flock -n 8; then
    log "another build holds ${CP_DIR}.lock: waiting for it" >&2
    flock -w "${LOCK_TIMEOUT}" 8 || die "timed out after ${LOCK_TIMEOUT}s waiting for ${CP_DIR}.lock"
  fi
  if ! have_node_bins; then
    start=$(date +%s)
    src="${CP_DIR}/src/kubernetes"
    [[ -f "${src}/.resolved" ]] || die "${src} is not resolved: hack/control-plane.sh did not finish"
    cd "${src}"
    if [[ ! -f .node-resolved ]]; then
      log "adding kubelet, kube-proxy and kubectl to ${src}" >&2
      cat > tools_node.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
GO
      with_progress "cluster: downloading the node's modules" go mod tidy
      touch .node-resolved
    fi
    ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${KUBE_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${KUBE_VERSION#v1.}"
    ldflags="${ldflags%.*}"
    # kubectl reports its version through client-go's variables.
    kubectl_ldflags="${ldflags} -X k8s.io/client-go/pkg/version.gitVersion=${KUBE_VERSION} -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$(echo "${KUBE_VERSION#v1.}" | cut -d. -f1)"
    for cmd in "${NODE_BINS[@]}"; do
      [[ -x "${BIN}/${cmd}" ]] && continue
      log "building ${cmd} ${KUBE_VERSION} (several minutes)" >&2
      flags="${ldflags}"
      [[ "${cmd}" == kubectl ]] && flags="${kubectl_ldflags}"
      with_progress "cluster: building ${cmd}" env CGO_ENABLED=0 go build -v -trimpath -ldflags "${flags}" -o "${BIN}/${cmd}.tmp" "k8s.io/kubernetes/cmd/${cmd}"
      mv "${BIN}/${cmd}.tmp" "${BIN}/${cmd}"
    done
    log "built the node binaries in $(( $(date +%s) - start ))s into ${BIN}" >&2
  fi
fi
echo "${BIN}"
