# Build the parentrag binary: operator, query server and CLI in one.
# The base images are build arguments so that machines without a registry
# can pass local equivalents (make cluster-image does: hack/cluster/image.sh).
ARG BUILDER_IMAGE=golang:1.26
ARG RUNTIME_IMAGE=gcr.io/distroless/static:nonroot

FROM ${BUILDER_IMAGE} AS builder
ARG TARGETOS
ARG TARGETARCH
WORKDIR /workspace
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} go build -trimpath -o parentrag ./cmd/parentrag

# Distroless, non-root.
FROM ${RUNTIME_IMAGE}
WORKDIR /
COPY --from=builder /workspace/parentrag .
USER 65532:65532
ENTRYPOINT ["/parentrag"]
