#!/usr/bin/env bash
# Stops the one-node cluster of make cluster-up and puts the host back as
# cluster-up found it (make cluster-down):
#
#   - kills the components (by pidfile, then any process of theirs a crash
#     left: shims, runc), and every process in the kubelet's cgroups;
#   - unmounts what lies under the state and run directories (pod volumes,
#     container root filesystems, network namespaces, the kubelet's bind
#     mount of its root directory);
#   - deletes the bridge (its veths go with the pods' namespaces);
#   - removes the iptables and ip6tables chains of kube-proxy, the kubelet,
#     CNI and cluster-up (KUBE-*, CNI-*, PARENTRAG-*; filter, nat, mangle,
#     raw) and the rules that jump to them;
#   - removes the kubepods cgroups from every hierarchy;
#   - restores the sysctls saved at cluster-up, removes the host paths that
#     were absent then, and deletes the state and run directories.
#
# Does nothing, and exits 0, when no cluster runs. Serialized with
# cluster-up under flock. The binaries and images in the cache are kept.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)"
# shellcheck source=lib.sh
source "${ROOT}/hack/cluster/lib.sh"

need_root
take_lock

# kill_pids SIGNAL PID...: signals each pid that still exists.
kill_pids() {
  local sig="$1"; shift
  local p
  for p in "$@"; do
    kill "-${sig}" "${p}" 2>/dev/null || true
  done
}

# wait_gone SECONDS PID...: waits until none of the pids exists.
wait_gone() {
  local secs="$1"; shift
  local deadline=$(( $(date +%s) + secs )) p alive
  while :; do
    alive=0
    for p in "$@"; do
      [[ -d "/proc/${p}" ]] && ! grep -q '^State:\s*Z' "/proc/${p}/status" 2>/dev/null && alive=1
    done
    (( alive == 0 )) && return 0
    (( $(date +%s) >= deadline )) && return 1
    sleep 0.2
  done
}

# stop NAME: SIGTERM, then SIGKILL after 10s, for a component's pid.
stop() {
  local name="$1" pid
  if pid="$(pid_of "${name}")"; then
    log "stopping ${name} (pid ${pid})"
    kill_pids TERM "${pid}"
    wait_gone 10 "${pid}" || { kill_pids KILL "${pid}"; wait_gone 5 "${pid}" || err "${name} (pid ${pid}) did not exit"; }
  fi
  rm -f "${RUN_DIR}/${name}.pid"
}

# cgroup_roots prints the mount point of every cgroup hierarchy (v1 and v2).
cgroup_roots() {
  awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i+1) == "cgroup" || $(i+1) == "cgroup2") print $5; break } }' /proc/self/mountinfo
}

# pod_pids prints the processes in the kubelet's cgroups.
pod_pids() {
  local r
  for r in $(cgroup_roots); do
    [[ -d "${r}/kubepods" ]] || continue
    find "${r}/kubepods" -name cgroup.procs -exec cat {} + 2>/dev/null || true
  done | sort -u
}

# our_mounts prints mount points under the given prefixes, deepest first.
our_mounts() {
  local prefix
  awk '{ print $5 }' /proc/self/mountinfo | while read -r m; do
    m="$(printf '%b' "${m}")"
    for prefix in "$@"; do
      if [[ "${m}" == "${prefix}" || "${m}" == "${prefix}/"* ]]; then
        echo "${m}"
        break
      fi
    done
  done | awk '{ print length($0) " " $0 }' | sort -rn | cut -d' ' -f2-
}

unmount_under() {
  local _ m
  for _ in 1 2 3 4 5; do
    mapfile -t mounts < <(our_mounts "$@")
    (( ${#mounts[@]} == 0 )) && return 0
    for m in "${mounts[@]}"; do
      umount "${m}" 2>/dev/null || umount -l "${m}" 2>/dev/null || true
    done
  done
  mapfile -t mounts < <(our_mounts "$@")
  (( ${#mounts[@]} == 0 )) || err "still mounted: ${mounts[*]}"
}

absent_paths() {
  [[ -f "${HOST_DIR}/absent-paths" ]] && cat "${HOST_DIR}/absent-paths"
  return 0
}

found=false
[[ -d "${STATE_DIR}" || -d "${RUN_DIR}" ]] && found=true
ip link show "${BRIDGE}" >/dev/null 2>&1 && found=true
[[ -n "$(our_pids)" ]] && found=true
if ! ${found}; then
  log "no cluster here (no ${STATE_DIR}, ${RUN_DIR}, bridge ${BRIDGE} or processes): nothing to do"
  exit 0
fi

# --- processes --------------------------------------------------------------
# The node first, so nothing restarts pods while they are killed.
stop kube-proxy
stop kubelet
mapfile -t pods < <(pod_pids)
if (( ${#pods[@]} > 0 )); then
  log "killing ${#pods[@]} pod processes"
  kill_pids KILL "${pods[@]}"
  wait_gone 10 "${pods[@]}" || err "some pod processes did not exit: ${pods[*]}"
fi
stop containerd
for c in kube-scheduler kube-controller-manager kube-apiserver etcd; do
  stop "${c}"
done
mapfile -t left < <(our_pids)
if (( ${#left[@]} > 0 )); then
  log "killing leftover processes of the cluster: ${left[*]}"
  kill_pids KILL "${left[@]}"
  wait_gone 10 "${left[@]}" || err "processes did not exit: ${left[*]}"
fi
mapfile -t pods < <(pod_pids)
(( ${#pods[@]} == 0 )) || { kill_pids KILL "${pods[@]}"; wait_gone 10 "${pods[@]}" || true; }

# --- mounts -----------------------------------------------------------------
mapfile -t created < <(absent_paths)
log "unmounting under ${STATE_DIR} and ${RUN_DIR}"
unmount_under "${STATE_DIR}" "${RUN_DIR}" "${created[@]}"

# --- network ----------------------------------------------------------------
if ip link show "${BRIDGE}" >/dev/null 2>&1; then
  for veth in $(ip -o link show master "${BRIDGE}" 2>/dev/null | awk -F': ' '{ print $2 }' | cut -d@ -f1); do
    ip link delete "${veth}" 2>/dev/null || true
  done
  log "deleting bridge ${BRIDGE}"
  ip link delete "${BRIDGE}" type bridge 2>/dev/null || ip link delete "${BRIDGE}" || true
fi

# clean_iptables CMD: removes our chains and the rules that jump to them.
clean_iptables() {
  local cmd="$1" table rules line chains c
  command -v "${cmd}" >/dev/null || return 0
  for table in filter nat mangle raw; do
    rules="$("${cmd}" -w 5 -t "${table}" -S 2>/dev/null)" || continue
    while read -r line; do
      [[ -n "${line}" ]] || continue
      eval "${cmd} -w 5 -t ${table} -D ${line#-A }" 2>/dev/null || true
    done < <(echo "${rules}" | grep -E '^-A (INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING) ' |
      grep -E -- '-j (KUBE|CNI|PARENTRAG)-' || true)
    chains="$(echo "${rules}" | sed -n -E 's/^-N ((KUBE|CNI|PARENTRAG)-[^ ]+)$/\1/p')"
    for c in ${chains}; do "${cmd}" -w 5 -t "${table}" -F "${c}" 2>/dev/null || true; done
    for c in ${chains}; do "${cmd}" -w 5 -t "${table}" -X "${c}" 2>/dev/null || true; done
  done
}
log "removing KUBE-*, CNI-* and PARENTRAG-* iptables chains"
clean_iptables iptables
clean_iptables ip6tables

# Tables that the cluster's iptables calls brought into being (iptables-nft
# creates filter, nat and mangle on first use): deleted when empty again.
if command -v nft >/dev/null && [[ -f "${HOST_DIR}/nft-tables.before" ]]; then
  while read -r _ family name; do
    [[ -n "${name}" ]] || continue
    grep -qx "table ${family} ${name}" "${HOST_DIR}/nft-tables.before" && continue
    case "${family}:${name}" in
      ip:filter|ip:nat|ip:mangle|ip:raw|ip:security) ipt=iptables ;;
      ip6:filter|ip6:nat|ip6:mangle|ip6:raw|ip6:security) ipt=ip6tables ;;
      *:kube-proxy|*:kubelet*) nft delete table "${family}" "${name}" 2>/dev/null || true; continue ;;
      *) continue ;;
    esac
    if ! "${ipt}" -w 5 -t "${name}" -S 2>/dev/null | grep -qv -e '^-P [A-Z]* ACCEPT$'; then
      nft delete table "${family}" "${name}" 2>/dev/null && log "deleted the empty nftables table ${family} ${name} (absent before)"
    fi
  done < <(nft list tables 2>/dev/null)
fi

# --- cgroups ----------------------------------------------------------------
for r in $(cgroup_roots); do
  [[ -d "${r}/kubepods" ]] || continue
  find "${r}/kubepods" -depth -type d -exec rmdir {} \; 2>/dev/null || true
  [[ -d "${r}/kubepods" ]] && err "could not remove ${r}/kubepods"
done
log "removed the kubepods cgroups"

# --- sysctls and host paths -------------------------------------------------
if [[ -f "${HOST_DIR}/sysctl.saved" ]]; then
  while IFS='=' read -r k v; do
    [[ -n "${k}" ]] || continue
    cur="$(sysctl -n "${k}" 2>/dev/null)" || continue
    if [[ "${cur}" != "${v}" ]]; then
      if sysctl -q -w "${k}=${v}" >/dev/null 2>&1; then
        log "restored ${k}=${v} (was ${cur})"
      else
        err "could not restore ${k}=${v}"
      fi
    fi
  done <"${HOST_DIR}/sysctl.saved"
else
  err "no saved sysctls (${HOST_DIR}/sysctl.saved): host settings left as they are"
fi
for p in "${created[@]}"; do
  if [[ -e "${p}" || -L "${p}" ]]; then
    rm -rf "${p}" && log "removed ${p} (created by the cluster)"
  fi
done
# Log symlinks the kubelet left in a /var/log/containers that existed before.
if [[ -d /var/log/containers ]]; then
  find /var/log/containers -maxdepth 1 -type l -lname "${STATE_DIR}/*" -delete 2>/dev/null || true
fi

rm -rf "${STATE_DIR}" "${RUN_DIR}"
log "cluster down; host restored"
