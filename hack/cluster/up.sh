#!/usr/bin/env bash
# Starts a real one-node Kubernetes cluster on this machine (make cluster-up):
# etcd, kube-apiserver, kube-controller-manager and kube-scheduler built from
# Go modules, Debian's containerd and runc, and a kubelet and kube-proxy
# built at the same version. Pods get addresses on the bridge parentrag0
# (10.244.0.0/24, the node's address is 10.244.0.1); Services are virtual
# IPs in 10.96.0.0/24 that kube-proxy (iptables mode) routes on the node.
#
#   make cluster-up                  or: sudo hack/cluster/up.sh
#   eval "$(make -s cluster-up | tail -n 1)"
#
# Idempotent and safe after a crash: components already running are kept,
# missing ones started. Serialized with cluster-down under flock. The last
# line of stdout is `export KUBECONFIG=... PATH=...` (the admin kubeconfig,
# and the folder of the kubectl built with the node first on PATH).
# cluster-down (hack/cluster/down.sh) stops everything and puts back what
# this changed on the host (saved in STATE_DIR/host at the first run).
#
# Environment: TIMEOUT (seconds per wait, default 300), LOCK_TIMEOUT,
# PARENTRAG_CLUSTER_DIR (state, default /var/lib/parentrag-cluster),
# PARENTRAG_CACHE (binaries and images, default ~/.cache/parentrag).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
# shellcheck source=lib.sh
source "${ROOT}/hack/cluster/lib.sh"
# shellcheck source=images.sh
source "${ROOT}/hack/cluster/images.sh"

START=$(date +%s)
step() { log "[$(( $(date +%s) - START ))s] $*"; }

need_root
take_lock
mkdir -p "${STATE_DIR}" "${RUN_DIR}" "${LOG_DIR}" "${PKI_DIR}" "${HOST_DIR}"

# --- packages ---------------------------------------------------------------
# nftables: cluster-down deletes with nft the empty iptables tables that the
# cluster's iptables calls created.
PACKAGES=(containerd runc containernetworking-plugins iptables nftables conntrack ethtool socat buildah openssl curl)
install_packages() {
  local missing=() p
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "${p}" 2>/dev/null | grep -q "install ok installed" || missing+=("${p}")
  done
  [[ ${#missing[@]} -eq 0 ]] && return
  command -v apt-get >/dev/null || die "missing packages ${missing[*]} and no apt-get to install them"
  step "installing ${missing[*]} (apt-get)"
  local aptlog="${LOG_DIR}/apt.log"
  # Packages only: Debian's containerd would start its own service on a
  # machine with systemd. policy-rc.d forbids it for this install.
  local policy=""
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' >"${policy}"
    chmod +x "${policy}"
    on_exit "rm -f ${policy}"
  fi
  local apt=(timeout 900 env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 -y)
  if ! "${apt[@]}" install --no-install-recommends "${missing[@]}" >"${aptlog}" 2>&1; then
    "${apt[@]}" update >>"${aptlog}" 2>&1 || true
    "${apt[@]}" install --no-install-recommends "${missing[@]}" >>"${aptlog}" 2>&1 ||
      { tail -n 20 "${aptlog}" >&2; die "apt-get install ${missing[*]} failed: see ${aptlog}"; }
  fi
  [[ -z "${policy}" ]] || rm -f "${policy}"
}
install_packages

# --- binaries ---------------------------------------------------------------
step "binaries: control plane and node at ${KUBE_VERSION} (built into ${BIN} on first use)"
"${ROOT}/hack/cluster/node-binaries.sh" >/dev/null ||
  die "building the binaries failed (hack/cluster/node-binaries.sh, hack/control-plane.sh)"
for b in etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl; do
  [[ -x "${BIN}/${b}" ]] || die "${BIN}/${b} is missing after the build"
done

# --- host snapshot (once: a second cluster-up must not record its own changes)
save_host_state() {
  if [[ ! -f "${HOST_DIR}/sysctl.saved" ]]; then
    local k v tmp="${HOST_DIR}/sysctl.saved.tmp"
    : >"${tmp}"
    for k in "${HOST_SYSCTLS[@]}"; do
      v="$(sysctl -n "${k}" 2>/dev/null)" || continue
      echo "${k}=${v}" >>"${tmp}"
    done
    mv "${tmp}" "${HOST_DIR}/sysctl.saved"
  fi
  if [[ ! -f "${HOST_DIR}/absent-paths" ]]; then
    local p tmp="${HOST_DIR}/absent-paths.tmp"
    : >"${tmp}"
    for p in "${HOST_PATHS[@]}"; do
      [[ -e "${p}" || -L "${p}" ]] || echo "${p}" >>"${tmp}"
    done
    mv "${tmp}" "${HOST_DIR}/absent-paths"
  fi
  if [[ ! -f "${HOST_DIR}/nft-tables.before" ]]; then
    nft list tables >"${HOST_DIR}/nft-tables.before.tmp" 2>/dev/null || true
    mv "${HOST_DIR}/nft-tables.before.tmp" "${HOST_DIR}/nft-tables.before"
  fi
  if [[ ! -f "${HOST_DIR}/iptables.before" ]]; then
    { iptables-save 2>/dev/null; ip6tables-save 2>/dev/null; } >"${HOST_DIR}/iptables.before.tmp" || true
    mv "${HOST_DIR}/iptables.before.tmp" "${HOST_DIR}/iptables.before"
  fi
}
save_host_state

# --- certificates and kubeconfigs -------------------------------------------
gen_ca() {
  [[ -f "${PKI_DIR}/ca.crt" && -f "${PKI_DIR}/ca.key" ]] && return
  openssl genrsa -out "${PKI_DIR}/ca.key.tmp" 2048 2>/dev/null
  openssl req -x509 -new -key "${PKI_DIR}/ca.key.tmp" -sha256 -days 3650 -subj "/CN=parentrag-cluster-ca" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" \
    -out "${PKI_DIR}/ca.crt.tmp" 2>/dev/null
  mv "${PKI_DIR}/ca.key.tmp" "${PKI_DIR}/ca.key"
  mv "${PKI_DIR}/ca.crt.tmp" "${PKI_DIR}/ca.crt"
}

# gen_cert NAME SUBJECT SANS: a key and a certificate signed by the CA, for
# serving and client authentication (SANS may be empty).
gen_cert() {
  local name="$1" subj="$2" sans="$3" d="${PKI_DIR}"
  [[ -f "${d}/${name}.crt" && -f "${d}/${name}.key" ]] && return
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=serverAuth,clientAuth"
    [[ -n "${sans}" ]] && echo "subjectAltName=${sans}"
  } >"${d}/${name}.ext"
  openssl genrsa -out "${d}/${name}.key.tmp" 2048 2>/dev/null
  openssl req -new -key "${d}/${name}.key.tmp" -subj "${subj}" -out "${d}/${name}.csr" 2>/dev/null
  openssl x509 -req -in "${d}/${name}.csr" -CA "${d}/ca.crt" -CAkey "${d}/ca.key" -CAcreateserial -sha256 \
    -days 365 -extfile "${d}/${name}.ext" -out "${d}/${name}.crt.tmp" 2>/dev/null
  rm -f "${d}/${name}.csr" "${d}/${name}.ext"
  mv "${d}/${name}.key.tmp" "${d}/${name}.key"
  mv "${d}/${name}.crt.tmp" "${d}/${name}.crt"
}

# kubeconfig NAME CERT: a kubeconfig for the apiserver with a client cert.
kubeconfig() {
  local name="$1" cert="$2"
  put "${STATE_DIR}/${name}.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: parentrag
  cluster:
    server: https://${NODE_IP}:${APISERVER_PORT}
    certificate-authority: ${PKI_DIR}/ca.crt
users:
- name: ${name}
  user:
    client-certificate: ${PKI_DIR}/${cert}.crt
    client-key: ${PKI_DIR}/${cert}.key
contexts:
- name: parentrag
  context: {cluster: parentrag, user: ${name}}
current-context: parentrag
EOF
}

step "certificates and kubeconfigs in ${PKI_DIR}"
gen_ca
gen_cert apiserver "/CN=kube-apiserver" \
  "IP:${NODE_IP},IP:${KUBERNETES_SVC_IP},IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost"
gen_cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" ""
gen_cert admin "/O=system:masters/CN=parentrag-admin" ""
gen_cert controller-manager "/CN=system:kube-controller-manager" ""
gen_cert scheduler "/CN=system:kube-scheduler" ""
gen_cert kube-proxy "/CN=system:kube-proxy" ""
gen_cert kubelet-client "/O=system:nodes/CN=system:node:${NODE_NAME}" ""
gen_cert kubelet "/CN=${NODE_NAME}" "IP:${NODE_IP},DNS:${NODE_NAME}"
if [[ ! -f "${PKI_DIR}/sa.key" ]]; then
  openssl genrsa -out "${PKI_DIR}/sa.key.tmp" 2048 2>/dev/null
  openssl rsa -in "${PKI_DIR}/sa.key.tmp" -pubout -out "${PKI_DIR}/sa.pub" 2>/dev/null
  mv "${PKI_DIR}/sa.key.tmp" "${PKI_DIR}/sa.key"
fi
chmod 600 "${PKI_DIR}"/*.key
kubeconfig admin admin
kubeconfig controller-manager controller-manager
kubeconfig scheduler scheduler
kubeconfig kubelet kubelet-client
kubeconfig kube-proxy kube-proxy
chmod 600 "${STATE_DIR}"/*.kubeconfig

# --- network: the bridge, and a guard that keeps pods' traffic on it ---------
step "bridge ${BRIDGE} ${NODE_IP}/24"
ip link show "${BRIDGE}" >/dev/null 2>&1 || ip link add "${BRIDGE}" type bridge
ip -4 addr show dev "${BRIDGE}" | grep -q "inet ${NODE_IP}/24" || ip addr add "${NODE_IP}/24" dev "${BRIDGE}"
ip link set "${BRIDGE}" up
# Service IPs are virtual: kube-proxy translates them on the node. Routed to
# the bridge, a packet to one it has not programmed yet stays here instead of
# following the default route off the machine.
ip route replace "${SERVICE_CIDR}" dev "${BRIDGE}" src "${NODE_IP}"
# Pods may reach the node, each other and Services (translated to pods or the
# node before FORWARD): nothing forwarded from the pod network leaves it.
iptables -N PARENTRAG-GUARD 2>/dev/null || true
iptables -C PARENTRAG-GUARD -s "${POD_CIDR}" ! -d "${POD_CIDR}" -j DROP 2>/dev/null ||
  iptables -A PARENTRAG-GUARD -s "${POD_CIDR}" ! -d "${POD_CIDR}" -j DROP
iptables -C FORWARD -j PARENTRAG-GUARD 2>/dev/null || iptables -I FORWARD 1 -j PARENTRAG-GUARD

# --- components -------------------------------------------------------------
# start NAME BINARY ARGS...: runs a component in its own session with its log
# in LOG_DIR and its pid in RUN_DIR, unless it already runs.
start() {
  local name="$1"; shift
  if pid="$(pid_of "${name}")"; then
    step "${name} already running (pid ${pid})"
    return
  fi
  # One whose pidfile a crash lost: adopt it rather than start a second.
  for pid in $(our_pids); do
    if [[ "$(readlink "/proc/${pid}/exe" 2>/dev/null)" == "$(readlink -f "$(command -v "$1")")" ]]; then
      echo "${pid}" >"${RUN_DIR}/${name}.pid"
      step "${name} already running (pid ${pid}, pidfile restored)"
      return
    fi
  done
  step "starting ${name} (log ${LOG_DIR}/${name}.log)"
  echo "--- $(date -u +%FT%TZ) started by cluster-up" >>"${LOG_DIR}/${name}.log"
  local as=()
  [[ -z "${RUN_AS:-}" ]] || as=(setpriv "--reuid=${RUN_AS}" "--regid=${RUN_AS}" --clear-groups --inh-caps=-all --)
  setsid "${as[@]}" "$@" >>"${LOG_DIR}/${name}.log" 2>&1 </dev/null 9>&- &
  echo "$!" >"${RUN_DIR}/${name}.pid"
}

mkdir -p "${STATE_DIR}/etcd" && chmod 700 "${STATE_DIR}/etcd"
start etcd "${BIN}/etcd" \
  --name parentrag --data-dir "${STATE_DIR}/etcd" \
  --listen-client-urls "http://${ETCD_CLIENT}" --advertise-client-urls "http://${ETCD_CLIENT}" \
  --listen-peer-urls "http://${ETCD_PEER}" --initial-advertise-peer-urls "http://${ETCD_PEER}" \
  --initial-cluster "parentrag=http://${ETCD_PEER}" \
  --quota-backend-bytes 2147483648 --log-level warn
WAIT_COMPONENT=etcd wait_for "etcd on ${ETCD_CLIENT}" curl -sf "http://${ETCD_CLIENT}/health"

start kube-apiserver "${BIN}/kube-apiserver" \
  --etcd-servers "http://${ETCD_CLIENT}" \
  --bind-address "${NODE_IP}" --advertise-address "${NODE_IP}" --secure-port "${APISERVER_PORT}" \
  --cert-dir "${STATE_DIR}/apiserver-certs" \
  --tls-cert-file "${PKI_DIR}/apiserver.crt" --tls-private-key-file "${PKI_DIR}/apiserver.key" \
  --client-ca-file "${PKI_DIR}/ca.crt" \
  --kubelet-client-certificate "${PKI_DIR}/apiserver-kubelet-client.crt" \
  --kubelet-client-key "${PKI_DIR}/apiserver-kubelet-client.key" \
  --kubelet-certificate-authority "${PKI_DIR}/ca.crt" \
  --kubelet-preferred-address-types InternalIP \
  --service-cluster-ip-range "${SERVICE_CIDR}" \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "${PKI_DIR}/sa.pub" \
  --service-account-signing-key-file "${PKI_DIR}/sa.key" \
  --authorization-mode Node,RBAC \
  --enable-admission-plugins NamespaceLifecycle,LimitRanger,ServiceAccount,DefaultStorageClass,DefaultTolerationSeconds,NodeRestriction,PodSecurity,ResourceQuota,MutatingAdmissionWebhook,ValidatingAdmissionWebhook \
  --allow-privileged=true --profiling=false --v=1
WAIT_COMPONENT=kube-apiserver wait_for "kube-apiserver /readyz on ${NODE_IP}:${APISERVER_PORT}" kubectl_admin get --raw /readyz

# The controller-manager runs as the image's non-root user (65532): the
# hostpath provisioner creates each claim's directory as its own user, mode
# 0750, so this makes claims writable by parentrag's pods (indexing Jobs),
# which run as that user. Its files are that user's.
KCM_UID=65532
mkdir -p "${STATE_DIR}/controller-manager-certs"
chown "${KCM_UID}:${KCM_UID}" "${STATE_DIR}/controller-manager-certs" "${STATE_DIR}/controller-manager.kubeconfig" \
  "${PKI_DIR}/controller-manager.crt" "${PKI_DIR}/controller-manager.key" "${PKI_DIR}/sa.key" "${PKI_DIR}/ca.key"
RUN_AS="${KCM_UID}" start kube-controller-manager "${BIN}/kube-controller-manager" \
  --kubeconfig "${STATE_DIR}/controller-manager.kubeconfig" \
  --authentication-kubeconfig "${STATE_DIR}/controller-manager.kubeconfig" \
  --authorization-kubeconfig "${STATE_DIR}/controller-manager.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port 10257 --cert-dir "${STATE_DIR}/controller-manager-certs" \
  --cluster-name parentrag --controllers '*' --leader-elect=false \
  --root-ca-file "${PKI_DIR}/ca.crt" \
  --service-account-private-key-file "${PKI_DIR}/sa.key" --use-service-account-credentials=true \
  --cluster-signing-cert-file "${PKI_DIR}/ca.crt" --cluster-signing-key-file "${PKI_DIR}/ca.key" \
  --service-cluster-ip-range "${SERVICE_CIDR}" --allocate-node-cidrs=false \
  --enable-hostpath-provisioner=true --profiling=false --v=1
start kube-scheduler "${BIN}/kube-scheduler" \
  --kubeconfig "${STATE_DIR}/scheduler.kubeconfig" \
  --authentication-kubeconfig "${STATE_DIR}/scheduler.kubeconfig" \
  --authorization-kubeconfig "${STATE_DIR}/scheduler.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port 10259 --cert-dir "${STATE_DIR}/scheduler-certs" \
  --leader-elect=false --profiling=false --v=1
WAIT_COMPONENT=kube-controller-manager wait_for "kube-controller-manager /healthz" curl -skf https://127.0.0.1:10257/healthz
WAIT_COMPONENT=kube-scheduler wait_for "kube-scheduler /healthz" curl -skf https://127.0.0.1:10259/healthz

# --- containerd -------------------------------------------------------------
CD="${STATE_DIR}/containerd"
mkdir -p "${CD}/root" "${CD}/opt" "${RUN_DIR}/containerd" "${STATE_DIR}/cni/net.d" "${STATE_DIR}/cni/ipam"
# No registry is reachable from here (and none may be contacted): every
# registry the node might be asked for resolves to a closed loopback port,
# so a missing image fails fast instead of leaving the machine.
for reg in docker.io registry.k8s.io gcr.io ghcr.io quay.io localhost; do
  mkdir -p "${CD}/certs.d/${reg}"
  put "${CD}/certs.d/${reg}/hosts.toml" <<EOF
server = "http://127.0.0.1:1"
[host."http://127.0.0.1:1"]
  capabilities = ["pull", "resolve"]
EOF
done
put "${CD}/config.toml" <<EOF
version = 2
root = "${CD}/root"
state = "${RUN_DIR}/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = "${CONTAINERD_SOCK}"

[plugins."io.containerd.internal.v1.opt"]
  path = "${CD}/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  # Without it runc fails in this kind of VM: "can't get final child's PID
  # from pipe: EOF".
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        Root = "${RUN_DIR}/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${STATE_DIR}/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "${CD}/certs.d"
EOF
put "${STATE_DIR}/cni/net.d/10-parentrag.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "parentrag",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "${BRIDGE}",
      "isGateway": true,
      "isDefaultGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "${STATE_DIR}/cni/ipam",
        "ranges": [[{"subnet": "${POD_CIDR}", "rangeStart": "10.244.0.10", "gateway": "${NODE_IP}"}]]
      }
    }
  ]
}
EOF
start containerd containerd --config "${CD}/config.toml"
WAIT_COMPONENT=containerd wait_for "containerd on ${CONTAINERD_SOCK}" ctr --address "${CONTAINERD_SOCK}" version

if ! ctr_k8s images ls -q | grep -qx "${PAUSE_IMAGE}"; then
  step "pause image ${PAUSE_IMAGE}"
  build_pause_image
  import_buildah_image "${PAUSE_IMAGE}" "${PAUSE_IMAGE}"
fi

# --- kubelet and kube-proxy -------------------------------------------------
KL="${STATE_DIR}/kubelet"
mkdir -p "${KL}" "${KL}/pki" "${STATE_DIR}/pod-logs" "${STATE_DIR}/kubelet-plugins"
put "${STATE_DIR}/kubelet-config.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: ${NODE_IP}
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: ${PKI_DIR}/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: ${PKI_DIR}/kubelet.crt
tlsPrivateKeyFile: ${PKI_DIR}/kubelet.key
rotateCertificates: false
serverTLSBootstrap: false
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://${CONTAINERD_SOCK}
imageServiceEndpoint: unix://${CONTAINERD_SOCK}
clusterDomain: cluster.local
# No DNS server in this cluster, and pods must not reach the host's.
resolvConf: ""
podLogsDir: ${STATE_DIR}/pod-logs
volumePluginDir: ${STATE_DIR}/kubelet-plugins
maxPods: 110
# The disk is the host's, shared with builds that fill and empty it: an
# absolute floor, not a share of a large disk, so that the node evicts
# (and reclaims images, which it does whatever the garbage collection
# below says) only when the disk is really about to fill.
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1Gi
  imagefs.available: 1Gi
# Images are imported, never pulled (there is no registry), so an image the
# kubelet collected, the pause image included, could not come back: image
# garbage collection is off. The disk is the host's, shared with builds.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
EOF
start kubelet "${BIN}/kubelet" \
  --config "${STATE_DIR}/kubelet-config.yaml" \
  --kubeconfig "${STATE_DIR}/kubelet.kubeconfig" \
  --root-dir "${KL}" --cert-dir "${KL}/pki" \
  --node-ip "${NODE_IP}" --hostname-override "${NODE_NAME}" --v=1
WAIT_COMPONENT=kubelet wait_for "kubelet /healthz" curl -sf http://127.0.0.1:10248/healthz

put "${STATE_DIR}/kube-proxy-config.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection:
  kubeconfig: ${STATE_DIR}/kube-proxy.kubeconfig
hostnameOverride: ${NODE_NAME}
bindAddress: ${NODE_IP}
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
clusterCIDR: ${POD_CIDR}
nodePortAddresses: ["${NODE_IP}/32"]
iptables:
  # Pod to Service to pod on the same bridge works whether or not bridged
  # traffic passes iptables.
  masqueradeAll: true
  # Leaves net.ipv4.conf.all.route_localnet alone.
  localhostNodePorts: false
conntrack:
  # Leaves the host's conntrack sysctls alone.
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF
start kube-proxy "${BIN}/kube-proxy" --config "${STATE_DIR}/kube-proxy-config.yaml" --v=1
WAIT_COMPONENT=kube-proxy wait_for "kube-proxy /healthz" curl -s -o /dev/null http://127.0.0.1:10256/healthz

# --- cluster objects and readiness ------------------------------------------
node_ready() {
  [[ "$(kubectl_admin get node "${NODE_NAME}" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" == True ]]
}
WAIT_COMPONENT=kubelet wait_for "node ${NODE_NAME} Ready" node_ready
step "node ${NODE_NAME} Ready"

put "${STATE_DIR}/storageclass.yaml" <<'EOF'
# The default StorageClass: the controller-manager's hostpath provisioner
# makes a directory under /tmp/hostpath_pv on the node for each claim.
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: standard
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: kubernetes.io/host-path
reclaimPolicy: Delete
volumeBindingMode: Immediate
EOF
WAIT_COMPONENT=kube-apiserver wait_for "the hostpath StorageClass" kubectl_admin apply -f "${STATE_DIR}/storageclass.yaml"
WAIT_COMPONENT=kube-controller-manager wait_for "the default ServiceAccount" kubectl_admin -n default get serviceaccount default
WAIT_COMPONENT=kube-controller-manager wait_for "the kube-root-ca.crt ConfigMap" kubectl_admin -n default get configmap kube-root-ca.crt
step "cluster up: node ${NODE_NAME} (${NODE_IP}), logs in ${LOG_DIR}, kubectl at ${BIN}/kubectl"
# One line that a shell can eval: the cluster, and the kubectl built for it.
echo "export KUBECONFIG=${KUBECONFIG_ADMIN} PATH=${BIN}:\$PATH"
