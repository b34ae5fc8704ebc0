#!/usr/bin/env bash
# Checks config/monitoring: every query of the dashboard and the alert
# rules is parsed with Prometheus's PromQL parser and must select series
# that parentrag's query server or operator exports (test/monitoring), and
# promtool check rules and promtool test rules pass on the PrometheusRule.
#
# promtool is built into ./bin from the Prometheus module that
# test/monitoring/go.mod pins (its tool line), not downloaded: the first
# run compiles it (about 1 minute on two cores in CI, where make test has
# built the Kubernetes packages it shares; more on its own), later runs
# reuse the Go build cache and take seconds. No service discovery is built in
# (remove_all_sd): checking and testing rules needs none.
#
# Usage: hack/monitoring.sh [go test flags]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../test/monitoring"
source ../../hack/progress.sh
PROMTOOL="$(cd ../.. && pwd -P)/bin/promtool"
export PROMTOOL
with_progress "monitoring: building promtool" go build -v -tags remove_all_sd -o "${PROMTOOL}" github.com/prometheus/prometheus/cmd/promtool
echo "monitoring: promtool of github.com/prometheus/prometheus $(go list -m -f "{{.Version}}" github.com/prometheus/prometheus)" >&2
go test -count=1 "$@" ./...
