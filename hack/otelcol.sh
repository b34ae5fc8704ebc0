#!/usr/bin/env bash
# Builds the OpenTelemetry Collector of the tracing tests (hack/otelcol: the
# OTLP receiver and the file exporter, from the collector's Go modules at
# the versions hack/otelcol/go.mod pins) into ./bin/otelcol, and prints its
# path. About 2 minutes cold on two cores, seconds after.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
# shellcheck source=progress.sh
source "${ROOT}/hack/progress.sh"
with_progress "otelcol: building the collector" env -C "${ROOT}/hack/otelcol" go build -v -o "${ROOT}/bin/otelcol" .
echo "${ROOT}/bin/otelcol"
