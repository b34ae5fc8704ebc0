# Shared settings and helpers of the one-node cluster scripts (hack/cluster).
# Sourced, not run. Everything the cluster writes lives under STATE_DIR and
# RUN_DIR; everything it changes on the host is recorded in STATE_DIR/host
# by cluster-up and put back by cluster-down.
# shellcheck shell=bash

KUBE_VERSION="${KUBE_VERSION:-v1.37.2}"
ETCD_VERSION="${ETCD_VERSION:-v3.7.3}"
KWOK_VERSION="${KWOK_VERSION:-v0.8.0}"
CACHE_ROOT="${PARENTRAG_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/parentrag}"
# The same key and directory as hack/control-plane.sh: the node binaries are
# built from its scratch module into its bin directory.
CP_KEY="kube-${KUBE_VERSION}_etcd-${ETCD_VERSION}_kwok-${KWOK_VERSION}"
CP_DIR="${CACHE_ROOT}/control-plane/${CP_KEY}"
BIN="${CP_DIR}/bin"

STATE_DIR="${PARENTRAG_CLUSTER_DIR:-/var/lib/parentrag-cluster}"
RUN_DIR="${PARENTRAG_CLUSTER_RUN:-/run/parentrag-cluster}"
LOG_DIR="${STATE_DIR}/logs"
PKI_DIR="${STATE_DIR}/pki"
HOST_DIR="${STATE_DIR}/host"
LOCK_FILE="${PARENTRAG_CLUSTER_LOCK:-/run/lock/parentrag-cluster.lock}"
KUBECONFIG_ADMIN="${STATE_DIR}/admin.kubeconfig"

NODE_NAME="${NODE_NAME:-parentrag-node}"
BRIDGE="${BRIDGE:-parentrag0}"
NODE_IP="10.244.0.1"
POD_CIDR="10.244.0.0/24"
SERVICE_CIDR="10.96.0.0/24"
KUBERNETES_SVC_IP="10.96.0.1"
APISERVER_PORT=6443
ETCD_CLIENT="127.0.0.1:12379"
ETCD_PEER="127.0.0.1:12380"
CONTAINERD_SOCK="${RUN_DIR}/containerd/containerd.sock"
# Images the node runs without a registry: built locally, imported into
# containerd's k8s.io namespace under these (normalized) names.
PAUSE_IMAGE="localhost/parentrag-pause:cluster"

# Seconds each wait may take before the scripts give up.
TIMEOUT="${TIMEOUT:-300}"
# Seconds to wait for the lock (a cold cluster-up holds it while it builds).
LOCK_TIMEOUT="${LOCK_TIMEOUT:-3600}"

# Host settings the kubelet, kube-proxy and the CNI bridge plugin may change:
# cluster-up saves them once, cluster-down puts them back.
HOST_SYSCTLS=(
  net.ipv4.ip_forward
  net.ipv4.conf.all.forwarding
  net.ipv4.conf.default.forwarding
  net.ipv6.conf.all.forwarding
  net.ipv6.conf.default.forwarding
  net.ipv4.conf.all.route_localnet
  net.bridge.bridge-nf-call-iptables
  net.bridge.bridge-nf-call-ip6tables
  vm.overcommit_memory
  vm.panic_on_oom
  kernel.panic
  kernel.panic_on_oops
  kernel.keys.root_maxkeys
  kernel.keys.root_maxbytes
  net.netfilter.nf_conntrack_max
  net.netfilter.nf_conntrack_tcp_timeout_established
  net.netfilter.nf_conntrack_tcp_timeout_close_wait
)
# Host paths the node's components create outside STATE_DIR when they are
# missing (CNI's result cache, the kubelet's log symlinks, the hostpath
# provisioner's volumes, shim sockets): cluster-up records which were
# absent, cluster-down removes those.
HOST_PATHS=(
  /var/lib/cni
  /var/log/containers
  /var/log/pods
  /var/lib/kubelet
  /etc/kubernetes
  /run/netns
  /tmp/hostpath_pv
  /run/containerd
  /var/lib/containerd
  /etc/cni
  /opt/cni
)

# The components in start order; cluster-down stops them in reverse.
COMPONENTS=(etcd kube-apiserver kube-controller-manager kube-scheduler containerd kubelet kube-proxy)

# on_exit CMD runs CMD when the script exits, after the ones added before.
EXIT_HOOKS=()
run_exit_hooks() {
  local h
  for h in "${EXIT_HOOKS[@]}"; do
    eval "${h}" || true
  done
}
on_exit() {
  EXIT_HOOKS+=("$1")
  trap run_exit_hooks EXIT
}

log() { echo "cluster: $*"; }
err() { echo "cluster: ERROR: $*" >&2; }
die() { err "$*"; exit 1; }

# take_lock serializes cluster-up, cluster-down and image loading.
take_lock() {
  mkdir -p "$(dirname "${LOCK_FILE}")"
  exec 9>"${LOCK_FILE}"
  if ! flock -n 9; then
    log "waiting for the cluster lock ${LOCK_FILE} (up to ${LOCK_TIMEOUT}s)"
    flock -w "${LOCK_TIMEOUT}" 9 || die "timed out after ${LOCK_TIMEOUT}s waiting for ${LOCK_FILE}"
  fi
}

need_root() {
  [[ "$(id -u)" == 0 ]] || die "must run as root (it runs containerd and the kubelet): try sudo $0"
}

# pid_of prints the pid of a component started by cluster-up when it is
# still running (its pidfile names it and its command line still carries
# the cluster's state directory); nothing otherwise.
pid_of() {
  local name="$1" pid
  [[ -f "${RUN_DIR}/${name}.pid" ]] || return 1
  pid="$(cat "${RUN_DIR}/${name}.pid")"
  [[ -n "${pid}" && -r "/proc/${pid}/cmdline" ]] || return 1
  tr '\0' ' ' <"/proc/${pid}/cmdline" | grep -q -e "${STATE_DIR}" -e "${RUN_DIR}" || return 1
  echo "${pid}"
}

# our_pids prints every process of the cluster still running: the
# components (also those whose pidfile a crash lost), containerd's shims and
# runc, recognised by their executable and a command line naming the
# cluster's state or run directory (shims carry the containerd socket path).
our_pids() {
  local p cmd exe
  for p in /proc/[0-9]*; do
    p="${p#/proc/}"
    exe="$(readlink "/proc/${p}/exe" 2>/dev/null)" || continue
    case "${exe##*/}" in
      etcd|kube-apiserver|kube-controller-manager|kube-scheduler|kubelet|kube-proxy|containerd|containerd-shim*|runc) ;;
      *) continue ;;
    esac
    cmd="$(tr '\0' ' ' 2>/dev/null <"/proc/${p}/cmdline")" || continue
    case "${cmd}" in
      *"${STATE_DIR}"*|*"${RUN_DIR}"*) echo "${p}" ;;
    esac
  done
}

# wait_for DESC COMMAND... retries COMMAND every second until it succeeds or
# TIMEOUT seconds pass. WAIT_COMPONENT names a component whose death ends the
# wait early; its log is shown on failure.
wait_for() {
  local desc="$1"; shift
  local deadline=$(( $(date +%s) + TIMEOUT ))
  local comp="${WAIT_COMPONENT:-}"
  until "$@" >/dev/null 2>&1; do
    if [[ -n "${comp}" ]] && ! pid_of "${comp}" >/dev/null; then
      fail_component "${comp}" "${comp} exited while waiting for ${desc}"
    fi
    if (( $(date +%s) >= deadline )); then
      if [[ -n "${comp}" ]]; then
        fail_component "${comp}" "timed out after ${TIMEOUT}s waiting for ${desc}"
      fi
      die "timed out after ${TIMEOUT}s waiting for ${desc}"
    fi
    sleep 1
  done
}

fail_component() {
  local comp="$1" msg="$2"
  err "${msg}"
  err "log: ${LOG_DIR}/${comp}.log (last lines follow)"
  tail -n 25 "${LOG_DIR}/${comp}.log" >&2 2>/dev/null || true
  exit 1
}

# put FILE writes stdin to FILE only when it differs: kube-proxy exits when
# its configuration file changes, and containerd reloads CNI on any write.
put() {
  local f="$1"
  cat >"${f}.tmp"
  if cmp -s "${f}.tmp" "${f}"; then
    rm -f "${f}.tmp"
  else
    mv "${f}.tmp" "${f}"
  fi
}

kubectl_admin() {
  "${BIN}/kubectl" --kubeconfig "${KUBECONFIG_ADMIN}" --request-timeout=10s "$@"
}

ctr_k8s() {
  ctr --address "${CONTAINERD_SOCK}" --namespace k8s.io "$@"
}
