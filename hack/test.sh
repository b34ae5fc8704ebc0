#!/usr/bin/env bash
# hack/test.sh [GO-TEST-FLAGS...]: runs every test of the module once. The
# race detector watches all of them but the long quality, load and
# end-to-end runs, which -short skips; those run after, without it, by
# name, in their packages only.
set -euo pipefail
cd "$(dirname "$0")/.."
skipped=$(mktemp)
trap 'rm -f "$skipped"' EXIT
go build -o bin/testjson ./hack/testjson
status=0
go test -race -short -json "$@" ./... | bin/testjson "$skipped" || status=$?
if [[ -s "$skipped" ]]; then
	names=$(cut -d' ' -f2 "$skipped" | sort -u | paste -sd'|')
	mapfile -t packages < <(cut -d' ' -f1 "$skipped" | sort -u)
	echo "test: the $(wc -l <"$skipped") tests that -short skips, without the race detector"
	go test "$@" -run "^($names)\$" "${packages[@]}" || status=$?
fi
exit "$status"
