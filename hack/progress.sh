# Progress for long builds, sourced by hack/control-plane.sh,
# hack/cluster/node-binaries.sh and hack/flux/source-controller.sh.
#
#   with_progress LABEL COMMAND...
#
# runs COMMAND with its output in a log, and every PROGRESS_INTERVAL seconds
# (default 30) prints to stderr how long it has run and, for `go build -v`,
# how many packages it has compiled and the last one. On failure it prints
# the end of the log. It returns COMMAND's status. COMMAND, a build, runs
# with GOGC=${BUILD_GOGC:-400}: its compiles take about a fifth less time
# (the Makefile's BUILD_GOGC says what was measured).

PROGRESS_INTERVAL="${PROGRESS_INTERVAL:-30}"

with_progress() {
  local label="$1"
  shift
  local log
  log="$(mktemp "${TMPDIR:-/tmp}/parentrag-build.XXXXXX")"
  local start
  start=$(date +%s)
  GOGC="${BUILD_GOGC:-400}" "$@" >"${log}" 2>&1 &
  local pid=$!
  while kill -0 "${pid}" 2>/dev/null; do
    local waited=0
    while (( waited < PROGRESS_INTERVAL )) && kill -0 "${pid}" 2>/dev/null; do
      sleep 1
      waited=$(( waited + 1 ))
    done
    kill -0 "${pid}" 2>/dev/null || break
    progress_line "${label}" "${log}" "${start}"
  done
  local rc=0
  wait "${pid}" || rc=$?
  if (( rc != 0 )); then
    echo "${label}: failed after $(( $(date +%s) - start ))s; its last lines:" >&2
    tail -n 25 "${log}" >&2
  fi
  rm -f "${log}"
  return "${rc}"
}

# progress_line says how long LABEL has run, and what `go build -v` or the
# go command's downloads have reached (the lines of its log that name a
# package or a module).
progress_line() {
  local label="$1" log="$2" start="$3"
  local elapsed=$(( $(date +%s) - start ))
  local packages last
  packages=$(grep -cv '^go: ' "${log}" 2>/dev/null || true)
  last=$(grep -v '^go: ' "${log}" 2>/dev/null | tail -n 1 || true)
  local downloads
  downloads=$(grep -c '^go: downloading' "${log}" 2>/dev/null || true)
  local what=""
  (( downloads > 0 )) && what=", ${downloads} modules downloaded"
  (( packages > 0 )) && what="${what}, ${packages} packages compiled (last: ${last})"
  printf '%s: %dm%02ds so far%s\n' "${label}" $(( elapsed / 60 )) $(( elapsed % 60 )) "${what}" >&2
}
