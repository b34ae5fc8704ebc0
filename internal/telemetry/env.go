package telemetry

import (
	"context"
	"os"
	"sort"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel"
)

// EnvVar is one variable of a process's environment.
type EnvVar struct{ Name, Value string }

// exportEnv holds the variables that send a child process's spans where
// this process's go (see exportVars); nil while tracing is off.
var exportEnv atomic.Pointer[[]EnvVar]

// ChildEnv is what a process this one starts (an indexing Job) needs in
// its environment for its spans to join ctx's trace and go where this
// process's go: the W3C trace context of ctx's span as OpenTelemetry's
// environment carriers name it (TRACEPARENT, and TRACESTATE and BAGGAGE
// when they are set), then the OTLP endpoint and protocol this process
// exports to. Sorted by name; nil while tracing is off. Headers
// (OTEL_EXPORTER_OTLP_HEADERS) are never passed on: they may hold
// credentials, which a Job's spec would show to whoever can read it.
func ChildEnv(ctx context.Context) []EnvVar {
	if !Enabled() {
		return nil
	}
	carrier := envCarrier{}
	otel.GetTextMapPropagator().Inject(ctx, carrier)
	out := make([]EnvVar, 0, len(carrier)+2)
	for name, value := range carrier {
		out = append(out, EnvVar{Name: name, Value: value})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if vars := exportEnv.Load(); vars != nil {
		out = append(out, *vars...)
	}
	return out
}

// ExtractEnv returns ctx with the remote span context that the
// environment lookup reads (TRACEPARENT, TRACESTATE and BAGGAGE, as
// ChildEnv writes them), while tracing is on: spans started from it are
// children of the span that started this process. A missing or malformed
// TRACEPARENT leaves ctx as it is, and spans start a trace of their own.
func ExtractEnv(ctx context.Context, lookup func(string) string) context.Context {
	if !Enabled() {
		return ctx
	}
	return otel.GetTextMapPropagator().Extract(ctx, envLookup(lookup))
}

// envCarrier collects what a propagator injects, under the names of
// environment variables: the header's name in upper case.
type envCarrier map[string]string

// Get reads the variable of a header's name.
func (c envCarrier) Get(key string) string { return c[strings.ToUpper(key)] }

// Set writes the variable of a header's name.
func (c envCarrier) Set(key, value string) { c[strings.ToUpper(key)] = value }

// Keys lists the variables written.
func (c envCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// envLookup reads what a propagator extracts from environment variables
// named as envCarrier names them; it writes nothing.
type envLookup func(string) string

// Get reads the variable of a header's name.
func (l envLookup) Get(key string) string { return l(strings.ToUpper(key)) }

// Set does nothing: the environment is read, not written.
func (l envLookup) Set(string, string) {}

// Keys lists nothing: the propagators read their own keys.
func (l envLookup) Keys() []string { return nil }

// exportVars are the variables that make a child process export where
// this one does: endpoint (--otlp-endpoint) as OTEL_EXPORTER_OTLP_ENDPOINT,
// or without it the endpoint variables this process was given, as they
// are; and OTEL_EXPORTER_OTLP_PROTOCOL=grpc when this process exports
// over gRPC. With no endpoint anywhere, OTEL_TRACES_EXPORTER=otlp turns
// the child's tracing on towards the exporter's default endpoint, as it
// turned this process's on.
func exportVars(endpoint string) []EnvVar {
	var vars []EnvVar
	if endpoint != "" {
		vars = append(vars, EnvVar{Name: "OTEL_EXPORTER_OTLP_ENDPOINT", Value: endpoint})
	} else {
		for _, name := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
			if v := os.Getenv(name); v != "" {
				vars = append(vars, EnvVar{Name: name, Value: v})
			}
		}
		if len(vars) == 0 {
			vars = append(vars, EnvVar{Name: "OTEL_TRACES_EXPORTER", Value: "otlp"})
		}
	}
	if grpc() {
		vars = append(vars, EnvVar{Name: "OTEL_EXPORTER_OTLP_PROTOCOL", Value: "grpc"})
	}
	return vars
}
