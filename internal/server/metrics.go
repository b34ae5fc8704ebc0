package server

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/parentrag/parentrag/internal/retrieval/bundle"
)

// metrics are the server's Prometheus series.
type metrics struct {
	duration  *prometheus.HistogramVec
	errors    *prometheus.CounterVec
	rejected  *prometheus.CounterVec
	inFlight  prometheus.Gauge
	revision  *prometheus.GaugeVec
	documents prometheus.Gauge
	parents   prometheus.Gauge
	children  prometheus.Gauge
	handler   http.Handler
}

// newDefaultRegistry returns a registry with the Go and process
// collectors, as a process's own /metrics usually has.
func newDefaultRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// newMetrics registers the server's series in reg, reusing those already
// there (a second Server on one registry shares them).
func newMetrics(reg *prometheus.Registry) *metrics {
	return &metrics{
		duration: register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "parentrag_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by endpoint and status code.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"endpoint", "code"})),
		errors: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parentrag_request_errors_total",
			Help: "HTTP requests answered with a 4xx or 5xx status code, by endpoint and status code.",
		}, []string{"endpoint", "code"})),
		rejected: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parentrag_requests_rejected_total",
			Help: "Retrieve requests refused or cut short to bound the server's load, by reason: queue_full and queue_wait (503), query_too_costly (400), timeout (504).",
		}, []string{"reason"})),
		inFlight: register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "parentrag_requests_in_flight",
			Help: "Retrievals holding a query slot.",
		})),
		revision: register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "parentrag_loaded_revision_info",
			Help: "The index revision being served: 1 for the loaded revision, absent before one is loaded.",
		}, []string{"revision"})),
		documents: register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "parentrag_loaded_documents",
			Help: "Source documents in the loaded revision.",
		})),
		parents: register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "parentrag_loaded_parents",
			Help: "Parents in the loaded revision.",
		})),
		children: register(reg, prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "parentrag_loaded_children",
			Help: "Children (indexed chunks) in the loaded revision.",
		})),
		handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}),
	}
}

// register registers c in reg, or returns the equal collector reg already
// holds. Any other registration error is a programming error and panics.
func register[C prometheus.Collector](reg *prometheus.Registry, c C) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	panic(err)
}

// setBundle describes the loaded revision, or none when m is nil.
func (m *metrics) setBundle(man *bundle.Manifest) {
	m.revision.Reset()
	if man == nil {
		m.documents.Set(0)
		m.parents.Set(0)
		m.children.Set(0)
		return
	}
	m.revision.WithLabelValues(man.Revision).Set(1)
	m.documents.Set(float64(man.Documents))
	m.parents.Set(float64(man.Parents))
	m.children.Set(float64(man.Children))
}

// instrument records the latency and, for 4xx and 5xx, the error of every
// request h answers, under endpoint; with tracing on, each request is a
// server span, the child of the span its traceparent header names.
func (s *Server) instrument(endpoint string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		r, span := traced(r, endpoint)
		h.ServeHTTP(rec, r)
		endSpan(span, rec.code)
		code := strconv.Itoa(rec.code)
		s.metrics.duration.WithLabelValues(endpoint, code).Observe(time.Since(start).Seconds())
		if rec.code >= 400 {
			s.metrics.errors.WithLabelValues(endpoint, code).Inc()
		}
	})
}

// statusRecorder remembers the status code written through it.
type statusRecorder struct {
	http.ResponseWriter
	code        int
	wroteHeader bool
}

// WriteHeader records the first status code written.
func (r *statusRecorder) WriteHeader(code int) {
	if !r.wroteHeader {
		r.code, r.wroteHeader = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

// Write implies a 200 when no status was written.
func (r *statusRecorder) Write(b []byte) (int, error) {
	r.wroteHeader = true
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
