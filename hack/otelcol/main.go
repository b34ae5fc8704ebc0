// Command otelcol is an OpenTelemetry Collector with only what parentrag's
// tracing tests need: the OTLP receiver (gRPC and HTTP) and the file
// exporter, which writes each batch of spans it receives as a line of OTLP
// JSON. It is a module of its own, built from the collector's Go modules
// by hack/otelcol.sh, so that the collector's dependencies do not choose
// parentrag's.
//
//	otelcol --config config.yaml
package main

import (
	"log"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
)

func main() {
	settings := otelcol.CollectorSettings{
		BuildInfo: component.BuildInfo{Command: "otelcol", Description: "OTLP in, spans to a file: parentrag's tracing tests", Version: "test"},
		Factories: factories,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory()}},
		},
	}
	if err := otelcol.NewCommand(settings).Execute(); err != nil {
		log.Fatal(err)
	}
}

// factories are the collector's components: the OTLP receiver, the file
// exporter and the collector's own telemetry.
func factories() (otelcol.Factories, error) {
	return otelcol.Factories{
		Receivers: map[component.Type]receiver.Factory{otlpreceiver.NewFactory().Type(): otlpreceiver.NewFactory()},
		Exporters: map[component.Type]exporter.Factory{fileexporter.NewFactory().Type(): fileexporter.NewFactory()},
		Telemetry: otelconftelemetry.NewFactory(),
	}, nil
}
