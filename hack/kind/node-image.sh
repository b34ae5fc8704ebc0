#!/usr/bin/env bash
# Assembles a kind node image from what this machine builds itself, with no
# registry: a Debian rootfs (debootstrap from Debian's archive: systemd,
# containerd, runc, the CNI plugins, iptables), kind's own node files (its
# entrypoint and systemd units, read from the kind module pinned below),
# kubelet, kubeadm, kubectl and crictl built from Go modules, and the
# control plane's images (kube-apiserver, kube-controller-manager,
# kube-scheduler, kube-proxy, etcd, pause) made from the binaries of
# hack/control-plane.sh and hack/cluster/node-binaries.sh, preloaded into
# the node's containerd store.
#
#   hack/kind/node-image.sh     build what is missing, print the image name
#
# Needs a Docker engine ($DOCKER_HOST), go, debootstrap (installed with
# apt-get when missing). Everything is cached under
# ~/.cache/parentrag/kind; the image is rebuilt only when it is missing.
# Cold, on two cores with the control plane already built: about 10
# minutes (debootstrap about 5, kubeadm and crictl about 4).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
# shellcheck source=../cluster/lib.sh
source "${ROOT}/hack/cluster/lib.sh"
# shellcheck source=../progress.sh
source "${ROOT}/hack/progress.sh"
# shellcheck source=versions.sh
source "${ROOT}/hack/kind/versions.sh"

KIND_DIR="${CACHE_ROOT}/kind"
# The node image's tag changes with anything that goes into it from here.
NODE_INPUTS_HASH="$(cd "${ROOT}/hack/kind" && cat node-image.sh node.Dockerfile versions.sh runc-bounded $(find node -type f | sort) | sha256sum | cut -c1-8)"
NODE_IMAGE="${KIND_NODE_IMAGE:-parentrag.local/kind-node:${KUBE_VERSION}-${NODE_INPUTS_HASH}}"
ROOTFS_TAR="${KIND_DIR}/rootfs-${DEBIAN_SUITE}.tar"
ROOTFS_IMAGE="parentrag.local/kind-rootfs:${DEBIAN_SUITE}"
KIND_BIN="${KIND_DIR}/bin"
log() { echo "kind-node: $*" >&2; }
# The classic builder, without its notice that BuildKit is not installed.
export DOCKER_BUILDKIT=0

# Packages of the node, as kind's base image installs them, with Debian's
# containerd, runc and CNI plugins in place of kind's own builds.
NODE_PACKAGES=systemd,systemd-sysv,dbus,containerd,runc,containernetworking-plugins,iptables,iproute2,ethtool,socat,conntrack,util-linux,mount,ca-certificates,kmod,procps,libseccomp2,bash,coreutils,findutils,sed,grep,gawk,ebtables,ipset,curl

# rootfs_tarball debootstraps the node's Debian into a tarball, once.
rootfs_tarball() {
  [[ -s "${ROOTFS_TAR}" ]] && return
  command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y debootstrap >&2
  local dir="${KIND_DIR}/rootfs.tmp"
  rm -rf "${dir}"
  mkdir -p "${KIND_DIR}"
  with_progress "kind-node: debootstrap ${DEBIAN_SUITE}" \
    debootstrap --variant=minbase --include="${NODE_PACKAGES}" "${DEBIAN_SUITE}" "${dir}"
  tar -C "${dir}" -cf "${ROOTFS_TAR}.tmp" .
  mv "${ROOTFS_TAR}.tmp" "${ROOTFS_TAR}"
  rm -rf "${dir}"
}

# node_tools builds kubeadm (in a scratch module beside the control plane's,
# at the same Kubernetes version) and crictl, once.
node_tools() {
  mkdir -p "${KIND_BIN}"
  if [[ ! -x "${KIND_BIN}/kubeadm" ]]; then
    local src="${KIND_DIR}/src"
    mkdir -p "${src}"
    cp "${CP_DIR}/src/kubernetes/go.mod" "${CP_DIR}/src/kubernetes/go.sum" "${src}/"
    printf '//go:build tools\n\npackage tools\n\nimport _ "k8s.io/kubernetes/cmd/kubeadm"\n' >"${src}/tools.go"
    (cd "${src}" && go mod tidy >&2)
    local minor="${KUBE_VERSION#v1.}"
    with_progress "kind-node: building kubeadm" env -C "${src}" CGO_ENABLED=0 go build -v -trimpath \
      -ldflags "-s -w -X k8s.io/component-base/version.gitVersion=${KUBE_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor%%.*}" \
      -o "${KIND_BIN}/kubeadm" k8s.io/kubernetes/cmd/kubeadm
  fi
  if [[ ! -x "${KIND_BIN}/crictl" ]]; then
    with_progress "kind-node: building crictl ${CRICTL_VERSION}" env GOBIN="${KIND_BIN}" CGO_ENABLED=0 \
      go install -v "sigs.k8s.io/cri-tools/cmd/crictl@${CRICTL_VERSION}"
  fi
}

# image_exists reports whether the engine holds an image.
image_exists() { docker image inspect "$1" >/dev/null 2>&1; }

# component_image NAME BINARY [BASE]: an image holding one static binary
# on PATH, from scratch or from BASE (kube-proxy needs iptables).
component_image() {
  local name="$1" binary="$2" base="${3:-scratch}" ctx
  image_exists "${name}" && return
  ctx="$(mktemp -d "${KIND_DIR}/ctx.XXXXXX")"
  cp "${binary}" "${ctx}/"
  cat >"${ctx}/Dockerfile" <<EOF
FROM ${base}
COPY $(basename "${binary}") /usr/local/bin/
ENV PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
EOF
  docker build -q -t "${name}" "${ctx}" >/dev/null
  rm -rf "${ctx}"
}

# pause_image builds the sandbox image from hack/cluster/pause.
pause_image() {
  image_exists "${PAUSE_IMAGE_KIND}" && return
  local ctx
  ctx="$(mktemp -d "${KIND_DIR}/ctx.XXXXXX")"
  CGO_ENABLED=0 go build -C "${ROOT}" -trimpath -ldflags "-s -w" -o "${ctx}/pause" ./hack/cluster/pause
  printf 'FROM scratch\nCOPY pause /pause\nUSER 65535:65535\nENTRYPOINT ["/pause"]\n' >"${ctx}/Dockerfile"
  docker build -q -t "${PAUSE_IMAGE_KIND}" "${ctx}" >/dev/null
  rm -rf "${ctx}"
}

# control_plane_images builds the images kubeadm and the kubelet run and
# saves them into the archive FILE.
control_plane_images() {
  local file="$1" c
  for c in kube-apiserver kube-controller-manager kube-scheduler; do
    component_image "registry.k8s.io/${c}:${KUBE_VERSION}" "${BIN}/${c}"
  done
  component_image "registry.k8s.io/kube-proxy:${KUBE_VERSION}" "${BIN}/kube-proxy" "${ROOTFS_IMAGE}"
  component_image "registry.k8s.io/etcd:${ETCD_IMAGE_TAG}" "${BIN}/etcd"
  pause_image
  docker save -o "${file}" \
    "registry.k8s.io/kube-apiserver:${KUBE_VERSION}" "registry.k8s.io/kube-controller-manager:${KUBE_VERSION}" \
    "registry.k8s.io/kube-scheduler:${KUBE_VERSION}" "registry.k8s.io/kube-proxy:${KUBE_VERSION}" \
    "registry.k8s.io/etcd:${ETCD_IMAGE_TAG}" "${PAUSE_IMAGE_KIND}"
}

# preload imports the archive IMAGES into a containerd store of its own,
# run here for the purpose with the node's containerd binary (Debian's),
# its CRI plugin off and its socket in the store's directory, and writes
# that store as the tarball OUT: the node image holds it as
# /var/lib/containerd, so the node boots with its images in place, as
# kind's own node images do.
preload() {
  local images="$1" out="$2" dir pid i
  dir="$(mktemp -d "${KIND_DIR}/preload.XXXXXX")"
  mkdir -p "${dir}/root" "${dir}/state"
  printf 'version = 2\nroot = "%s"\nstate = "%s"\ndisabled_plugins = ["io.containerd.grpc.v1.cri"]\n[grpc]\n  address = "%s"\n' \
    "${dir}/root" "${dir}/state" "${dir}/state/containerd.sock" >"${dir}/config.toml"
  containerd --config "${dir}/config.toml" >"${dir}/containerd.log" 2>&1 &
  pid=$!
  for i in $(seq 30); do
    [[ -S "${dir}/state/containerd.sock" ]] && break
    sleep 1
  done
  if ! ctr --address "${dir}/state/containerd.sock" --namespace k8s.io images import --all-platforms \
      --snapshotter overlayfs "${images}" >&2; then
    kill "${pid}"
    tail "${dir}/containerd.log" >&2
    die "importing the control plane's images failed"
  fi
  kill "${pid}"
  wait "${pid}" 2>/dev/null || true
  tar -C "${dir}/root" -cf "${out}" .
  rm -rf "${dir}"
}

# node_context lays out the node image's build context in DIR.
node_context() {
  local dir="$1" kindsrc
  kindsrc="$(go mod download -json "sigs.k8s.io/kind@${KIND_VERSION}" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  [[ -d "${kindsrc}/images/base/files" ]] || die "kind ${KIND_VERSION}'s node files are not in ${kindsrc}"
  mkdir -p "${dir}/files" "${dir}/bin"
  cp -r "${kindsrc}/images/base/files/." "${dir}/files/"
  chmod -R u+w "${dir}/files"
  cp -r "${ROOT}/hack/kind/node/." "${dir}/files/"
  cp "${BIN}/kubelet" "${BIN}/kubectl" "${KIND_BIN}/kubeadm" "${KIND_BIN}/crictl" "${dir}/bin/"
  sed -i "s|@PAUSE_IMAGE@|${PAUSE_IMAGE_KIND}|" "${dir}/files/etc/containerd/config.toml"
  # containerd's default spec (the node's containerd is this machine's
  # Debian one) with the createRuntime hook that makes claims writable.
  ctr oci spec | jq '.hooks.createRuntime += [{"path": "/kind/bin/hostpath-writable.sh"}] | del(.process.rlimits)' \
    >"${dir}/files/etc/containerd/cri-base.json"
  echo "${KUBE_VERSION}" >"${dir}/files/kind/version"
  control_plane_images "${dir}/control-plane.tar"
  preload "${dir}/control-plane.tar" "${dir}/containerd.tar"
  rm "${dir}/control-plane.tar"
  cp "${ROOT}/hack/kind/node.Dockerfile" "${dir}/Dockerfile"
}

main() {
  if image_exists "${NODE_IMAGE}"; then
    echo "${NODE_IMAGE}"
    return
  fi
  local start
  start=$(date +%s)
  docker info >/dev/null 2>&1 || die "no Docker engine answers (docker info failed)"
  "${ROOT}/hack/cluster/node-binaries.sh" >/dev/null
  rootfs_tarball
  image_exists "${ROOTFS_IMAGE}" || docker import "${ROOTFS_TAR}" "${ROOTFS_IMAGE}" >/dev/null
  node_tools
  local ctx
  ctx="$(mktemp -d "${KIND_DIR}/node.XXXXXX")"
  node_context "${ctx}"
  log "building ${NODE_IMAGE}"
  docker build -q --build-arg "BASE=${ROOTFS_IMAGE}" -t "${NODE_IMAGE}" "${ctx}" >/dev/null
  rm -rf "${ctx}"
  log "${NODE_IMAGE} built in $(( $(date +%s) - start ))s"
  echo "${NODE_IMAGE}"
}

main "$@"
