# Versions of the kind path, sourced by hack/kind/*.sh and hack/kind-e2e.sh
# after hack/cluster/lib.sh (which sets KUBE_VERSION and ETCD_VERSION).
# shellcheck shell=bash

# kind, built from Go modules into ./bin.
KIND_VERSION="${KIND_VERSION:-v0.33.0}"
# crictl in the node (kind load reads images through it).
CRICTL_VERSION="${CRICTL_VERSION:-v1.37.0}"
# The node's Debian, from the archive debootstrap uses by default.
DEBIAN_SUITE="${DEBIAN_SUITE:-bookworm}"
# The sandbox image kubeadm expects at KUBE_VERSION, and etcd's tag.
PAUSE_IMAGE_KIND="registry.k8s.io/pause:3.10.2"
ETCD_IMAGE_TAG="${ETCD_VERSION#v}-0"
