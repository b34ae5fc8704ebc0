#!/usr/bin/env bash
# hack/test.sh [GO-TEST-FLAGS...]: runs every test of the module once. The
# race detector watches all of them but the long quality, load and
# end-to-end runs, which -short skips; those run after, without it, by
# name, in their packages only, with the image's build flags (CGO_ENABLED=0,
# -trimpath; the binaries they build inherit them), so that they and the
# image reuse what vet compiled.
#
# The go command runs with GOGC=${BUILD_GOGC:-400}, which makes its
# compilers and linkers faster (see the Makefile); the test binaries run
# with the caller's GOGC (-exec). They are linked without DWARF (-w).
set -euo pipefail
cd "$(dirname "$0")/.."
skipped=$(mktemp)
trap 'rm -f "$skipped"' EXIT
if [[ -n "${GOGC:-}" ]]; then run=(-exec "env GOGC=${GOGC}"); else run=(-exec "env -u GOGC"); fi
build=(env GOGC="${BUILD_GOGC:-400}" go)
"${build[@]}" build -o bin/testjson ./hack/testjson
status=0
"${build[@]}" test -race -ldflags=-w "${run[@]}" -short -json "$@" ./... | bin/testjson "$skipped" || status=$?
if [[ -s "$skipped" ]]; then
	names=$(cut -d' ' -f2 "$skipped" | sort -u | paste -sd'|')
	mapfile -t packages < <(cut -d' ' -f1 "$skipped" | sort -u)
	# Flux's controllers, for the end-to-end test of a Flux commit (built on
	# first use; .ci/run builds them beside the race pass).
	eval "$(hack/flux/source-controller.sh --print)"
	echo "test: the $(wc -l <"$skipped") tests that -short skips, without the race detector"
	CGO_ENABLED=0 GOFLAGS="$(go env GOFLAGS) -trimpath" "${build[@]}" test -ldflags=-w "${run[@]}" "$@" -run "^($names)\$" "${packages[@]}" || status=$?
fi
exit "$status"
