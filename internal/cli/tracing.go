package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/parentrag/parentrag/internal/telemetry"
)

// otlpFlag registers --otlp-endpoint into p, for a command that traces
// what.
func otlpFlag(fl *pflag.FlagSet, p *string, what string) {
	fl.StringVar(p, "otlp-endpoint", "", fmt.Sprintf("send a trace of %s over OTLP to this URL (http://collector:4318; with OTEL_EXPORTER_OTLP_PROTOCOL=grpc, :4317); without it the standard OTEL_* variables decide, and tracing is off when none is set", what))
}

// startTracing turns tracing on as endpoint (--otlp-endpoint) and the
// OTEL_* variables say, for service, and returns the command's context
// with the span TRACEPARENT names as the parent of the command's spans
// (the operator's, in an indexing Job; none, and they start a trace of
// their own). stop sends the spans not yet exported, waiting at most 5
// seconds, and turns tracing off. Off, it returns the command's context
// and a stop that does nothing.
func startTracing(cmd *cobra.Command, endpoint, service string) (ctx context.Context, stop func(), err error) {
	shutdown, err := telemetry.Setup(cmd.Context(), telemetry.Config{Endpoint: endpoint, ServiceName: service})
	if err != nil {
		return nil, nil, fmt.Errorf("--otlp-endpoint: %w", err)
	}
	if !telemetry.Enabled() {
		return cmd.Context(), func() {}, nil
	}
	return telemetry.ExtractEnv(cmd.Context(), os.Getenv), func() {
		flushTraces(shutdown, slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)))
	}, nil
}

// flushTraces sends the spans not yet exported, waiting at most 5 seconds.
func flushTraces(stop func(context.Context) error, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := stop(ctx); err != nil {
		log.Warn("exporting the last spans failed", "error", err)
	}
}
