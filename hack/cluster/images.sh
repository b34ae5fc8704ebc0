# Image helpers of the one-node cluster scripts: buildah with its own store
# in the cache (nothing in /var/lib/containers), the local stand-ins for the
# Dockerfile's base images, the pause image, and importing an image into the
# node's containerd. Sourced after lib.sh, not run. Nothing is ever pushed
# to a registry: images go from buildah's store to a docker-archive file to
# `ctr -n k8s.io images import`.
# shellcheck shell=bash

BUILDAH_DIR="${CACHE_ROOT}/buildah"
BUILDAH=(buildah --root "${BUILDAH_DIR}/storage" --runroot "${BUILDAH_DIR}/run" --storage-driver overlay)
GO_VERSION_LOCAL="$(go env GOVERSION 2>/dev/null || echo go)"
BUILDER_IMAGE_LOCAL="localhost/parentrag-builder:${GO_VERSION_LOCAL}"
RUNTIME_IMAGE_LOCAL="localhost/parentrag-runtime:static-nonroot"

# buildah creates these on the host (CNI's lock, a blob-info cache) even with
# its store in the cache: the scripts remove the ones it created.
BUILDAH_HOST_ABSENT=()
for _p in /etc/cni /var/lib/containers; do
  [[ -e "${_p}" ]] || BUILDAH_HOST_ABSENT+=("${_p}")
done
unset _p
buildah_restore_host() {
  local p
  for p in "${BUILDAH_HOST_ABSENT[@]}"; do
    rm -rf "${p}"
  done
}
on_exit buildah_restore_host

have_buildah_image() {
  "${BUILDAH[@]}" inspect --type image "$1" >/dev/null 2>&1
}

# normalize_ref prints an image reference the way the kubelet and containerd
# read it: parentrag:cluster is docker.io/library/parentrag:cluster.
normalize_ref() {
  local ref="$1" first
  if [[ "${ref}" != */* ]]; then
    ref="docker.io/library/${ref}"
  else
    first="${ref%%/*}"
    if [[ "${first}" != *.* && "${first}" != *:* && "${first}" != localhost ]]; then
      ref="docker.io/${ref}"
    fi
  fi
  local last="${ref##*/}"
  [[ "${last}" == *:* || "${last}" == *@* ]] || ref="${ref}:latest"
  echo "${ref}"
}

# import_archive FILE: imports a docker-archive or OCI archive into the node.
import_archive() {
  local file="$1" out
  [[ -S "${CONTAINERD_SOCK}" ]] || die "the node's containerd is not running (${CONTAINERD_SOCK}): run make cluster-up first"
  out="$(ctr_k8s images import "${file}" 2>&1)" || die "ctr images import ${file} failed: ${out}"
  echo "${out}" | sed 's/^/cluster: /'
}

# import_buildah_image SOURCE NAME: exports SOURCE from buildah's store as a
# docker-archive tagged NAME (normalized) and imports it into the node.
import_buildah_image() {
  local src="$1" name tmp
  name="$(normalize_ref "$2")"
  mkdir -p "${BUILDAH_DIR}/tmp"
  tmp="$(mktemp -p "${BUILDAH_DIR}/tmp" image-XXXXXX.tar)"
  rm -f "${tmp}"
  "${BUILDAH[@]}" push --quiet "${src}" "docker-archive:${tmp}:${name}" >/dev/null ||
    { rm -f "${tmp}"; die "buildah push ${src} to ${tmp} failed"; }
  local out extra
  out="$(import_archive "${tmp}")"
  rm -f "${tmp}"
  # The archive also carries the buildah store's own name (localhost/...):
  # the node keeps only NAME.
  for extra in $(echo "${out}" | sed -n 's/^cluster: unpacking \([^ ]*\) .*/\1/p'); do
    [[ "${extra}" == "${name}" ]] || ctr_k8s images rm "${extra}" >/dev/null 2>&1 || true
  done
  log "imported ${name} into the node (containerd namespace k8s.io)"
}

# scratch_image NAME FUNCTION: builds NAME from scratch by calling FUNCTION
# with the container's mounted root filesystem, unless NAME exists.
scratch_image() {
  local name="$1" fill="$2" c mnt
  have_buildah_image "${name}" && return
  log "assembling ${name}"
  c="$("${BUILDAH[@]}" from scratch)"
  mnt="$("${BUILDAH[@]}" mount "${c}")"
  if ! "${fill}" "${mnt}" "${c}"; then
    "${BUILDAH[@]}" rm "${c}" >/dev/null 2>&1 || true
    die "assembling ${name} failed"
  fi
  "${BUILDAH[@]}" umount "${c}" >/dev/null
  "${BUILDAH[@]}" commit --quiet --rm "${c}" "${name}" >/dev/null
}

fill_pause() {
  local mnt="$1" c="$2"
  CGO_ENABLED=0 go build -C "${ROOT}" -trimpath -ldflags "-s -w" -o "${mnt}/pause" ./hack/cluster/pause
  "${BUILDAH[@]}" config --entrypoint '["/pause"]' --cmd '' --user 65535:65535 "${c}"
}

# The builder: this machine's Go toolchain and a shell (dash and the two
# libraries it loads), with the module proxy off: cluster-image mounts the
# host's module and build caches into the build.
fill_builder() {
  local mnt="$1" c="$2" goroot lib
  goroot="$(go env GOROOT)"
  mkdir -p "${mnt}/usr/local" "${mnt}/bin" "${mnt}/tmp" "${mnt}/go/pkg/mod" "${mnt}/root/.cache/go-build" "${mnt}/etc/ssl/certs"
  chmod 1777 "${mnt}/tmp"
  cp -a "${goroot}" "${mnt}/usr/local/go"
  cp "$(readlink -f /bin/dash)" "${mnt}/bin/sh"
  for lib in $(ldd /bin/dash | grep -o '/[^ ]*'); do
    mkdir -p "${mnt}$(dirname "${lib}")"
    cp "$(readlink -f "${lib}")" "${mnt}${lib}"
  done
  cp /etc/ssl/certs/ca-certificates.crt "${mnt}/etc/ssl/certs/"
  echo "root:x:0:0:root:/root:/bin/sh" >"${mnt}/etc/passwd"
  echo "root:x:0:" >"${mnt}/etc/group"
  "${BUILDAH[@]}" config --env PATH=/usr/local/go/bin:/go/bin:/usr/local/bin:/usr/bin:/bin \
    --env GOPATH=/go --env HOME=/root --env GOTOOLCHAIN=local --env GOPROXY=off --env GOFLAGS=-mod=readonly \
    --workingdir / --cmd /bin/sh "${c}"
}

# The runtime: what the distroless static:nonroot image holds that the
# binary needs (CA certificates, a passwd and group with nonroot 65532, /tmp).
fill_runtime() {
  local mnt="$1" c="$2"
  mkdir -p "${mnt}/etc/ssl/certs" "${mnt}/tmp" "${mnt}/home/nonroot"
  chmod 1777 "${mnt}/tmp"
  chown 65532:65532 "${mnt}/home/nonroot"
  cp /etc/ssl/certs/ca-certificates.crt "${mnt}/etc/ssl/certs/"
  cat >"${mnt}/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/sbin/nologin
nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin
EOF
  cat >"${mnt}/etc/group" <<'EOF'
root:x:0:
nobody:x:65534:
nonroot:x:65532:
EOF
  "${BUILDAH[@]}" config --user 65532:65532 --workingdir /home/nonroot "${c}"
}

build_pause_image() { scratch_image "${PAUSE_IMAGE}" fill_pause; }
build_base_images() {
  scratch_image "${BUILDER_IMAGE_LOCAL}" fill_builder
  scratch_image "${RUNTIME_IMAGE_LOCAL}" fill_runtime
}

# build_operator_image IMG: builds the repository's Dockerfile into
# buildah's store as IMG, offline: the local base images stand in for the
# Dockerfile's, and the Go build reads the host's module and build caches,
# mounted, with the module proxy off.
build_operator_image() {
  local img="$1"
  build_base_images
  log "downloading the module's dependencies into $(go env GOMODCACHE) (the build runs offline)"
  (cd "${ROOT}" && go mod download)
  local gomodcache gocache
  gomodcache="$(go env GOMODCACHE)"
  gocache="$(go env GOCACHE)"
  mkdir -p "${gocache}"
  log "building ${img} from ${ROOT}/Dockerfile (log ${BUILDAH_DIR}/build.log)"
  if ! "${BUILDAH[@]}" build --isolation chroot --pull=never --network host \
      --build-arg "BUILDER_IMAGE=${BUILDER_IMAGE_LOCAL}" \
      --build-arg "RUNTIME_IMAGE=${RUNTIME_IMAGE_LOCAL}" \
      --volume "${gomodcache}:/go/pkg/mod" \
      --volume "${gocache}:/root/.cache/go-build" \
      --tag "${img}" --file "${ROOT}/Dockerfile" "${ROOT}" >"${BUILDAH_DIR}/build.log" 2>&1; then
    tail -n 25 "${BUILDAH_DIR}/build.log" >&2
    die "buildah build failed: see ${BUILDAH_DIR}/build.log"
  fi
}
