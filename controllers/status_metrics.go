package controllers

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// Series of the status collector, in the shape kube-state-metrics gives a
// custom resource's conditions: one series of value 1 per condition, with
// its status and reason as labels.
var (
	corpusConditionDesc = prometheus.NewDesc("parentrag_corpus_status_condition",
		"A condition of a Corpus (Ready, Reconciling, Stalled, SourcesReady): 1 for its current status and reason.",
		[]string{"namespace", "name", "type", "status", "reason"}, nil)
	corpusRevisionDesc = prometheus.NewDesc("parentrag_corpus_active_revision_info",
		"The revision a Corpus serves: 1, with the revision's name.",
		[]string{"namespace", "name", "revision"}, nil)
	corpusSourceErrorsDesc = prometheus.NewDesc("parentrag_corpus_source_errors",
		"Sources or documents of a Corpus that could not be read in the last build (status.sourceErrors).",
		[]string{"namespace", "name"}, nil)
	retrieverConditionDesc = prometheus.NewDesc("parentrag_retriever_status_condition",
		"A condition of a Retriever (Ready, Reconciling, Stalled): 1 for its current status and reason.",
		[]string{"namespace", "name", "type", "status", "reason"}, nil)
	statusScrapeErrorDesc = prometheus.NewDesc("parentrag_status_scrape_error",
		"1 when the last scrape could not list the objects of a kind (corpora or retrievers), 0 otherwise.",
		[]string{"kind"}, nil)
)

// statusScrapeTimeout bounds how long one scrape waits for the cache.
const statusScrapeTimeout = 5 * time.Second

// statusCollector exports the conditions of every Corpus and Retriever the
// operator watches, read from its cache at each scrape: nothing is kept
// between scrapes, so a deleted object's series go with it.
type statusCollector struct {
	// reader returns the cache to read, or nil while there is none.
	reader func() client.Reader
}

// Describe sends the collector's descriptions.
func (c *statusCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{corpusConditionDesc, corpusRevisionDesc, corpusSourceErrorsDesc, retrieverConditionDesc, statusScrapeErrorDesc} {
		ch <- d
	}
}

// Collect lists the Corpora and Retrievers and sends their series; a list
// that fails sets parentrag_status_scrape_error for its kind and sends
// nothing else of that kind.
func (c *statusCollector) Collect(ch chan<- prometheus.Metric) {
	reader := c.reader()
	if reader == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), statusScrapeTimeout)
	defer cancel()
	var corpora v1alpha1.CorpusList
	err := reader.List(ctx, &corpora)
	ch <- scrapeError("corpora", err)
	if err == nil {
		for i := range corpora.Items {
			collectCorpus(ch, &corpora.Items[i])
		}
	}
	var retrievers v1alpha1.RetrieverList
	err = reader.List(ctx, &retrievers)
	ch <- scrapeError("retrievers", err)
	if err == nil {
		for i := range retrievers.Items {
			r := &retrievers.Items[i]
			collectConditions(ch, retrieverConditionDesc, r.Namespace, r.Name, r.Status.Conditions)
		}
	}
}

// collectCorpus sends one Corpus's conditions, active revision and source
// errors.
func collectCorpus(ch chan<- prometheus.Metric, c *v1alpha1.Corpus) {
	collectConditions(ch, corpusConditionDesc, c.Namespace, c.Name, c.Status.Conditions)
	if a := c.Status.ActiveRevision; a != nil {
		ch <- prometheus.MustNewConstMetric(corpusRevisionDesc, prometheus.GaugeValue, 1, c.Namespace, c.Name, a.Name)
	}
	ch <- prometheus.MustNewConstMetric(corpusSourceErrorsDesc, prometheus.GaugeValue, float64(len(c.Status.SourceErrors)), c.Namespace, c.Name)
}

// collectConditions sends one series per condition.
func collectConditions(ch chan<- prometheus.Metric, desc *prometheus.Desc, namespace, name string, conditions []metav1.Condition) {
	for _, cond := range conditions {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, 1, namespace, name, cond.Type, string(cond.Status), cond.Reason)
	}
}

// scrapeError is the scrape-error series of kind.
func scrapeError(kind string, err error) prometheus.Metric {
	v := 0.0
	if err != nil {
		v = 1
	}
	return prometheus.MustNewConstMetric(statusScrapeErrorDesc, prometheus.GaugeValue, v, kind)
}

// RegisterStatusMetrics exports on reg the conditions of the Corpora and
// Retrievers in the cache reader returns at each scrape (nil: none, and no
// series). A collector registered before on reg is replaced.
func RegisterStatusMetrics(reg prometheus.Registerer, reader func() client.Reader) error {
	return registerCollector(reg, &statusCollector{reader: reader})
}

// registerCollector registers c on reg in place of an equal collector.
func registerCollector(reg prometheus.Registerer, c prometheus.Collector) error {
	err := reg.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		reg.Unregister(are.ExistingCollector)
		err = reg.Register(c)
	}
	return err
}

// runningCaches are the caches of the managers running in this process,
// latest last: the operator's /metrics (controller-runtime's registry)
// reads the latest, so a second manager that stops (as in tests) hands the
// series back to the one still running.
var runningCaches struct {
	sync.Mutex
	readers []client.Reader
	once    sync.Once
}

// latestCache returns the cache of the manager started last, or nil.
func latestCache() client.Reader {
	runningCaches.Lock()
	defer runningCaches.Unlock()
	if n := len(runningCaches.readers); n > 0 {
		return runningCaches.readers[n-1]
	}
	return nil
}

// statusSource is a manager's runnable that offers its cache to the status
// series while the manager runs, on every replica (leader or not).
type statusSource struct {
	reader client.Reader
}

// Start offers the cache until ctx is done.
func (s statusSource) Start(ctx context.Context) error {
	runningCaches.Lock()
	runningCaches.readers = append(runningCaches.readers, s.reader)
	runningCaches.Unlock()
	<-ctx.Done()
	runningCaches.Lock()
	defer runningCaches.Unlock()
	for i, r := range runningCaches.readers {
		if r == s.reader {
			runningCaches.readers = append(runningCaches.readers[:i], runningCaches.readers[i+1:]...)
			break
		}
	}
	return nil
}

// NeedLeaderElection is false: every replica exports the series.
func (statusSource) NeedLeaderElection() bool { return false }

// registerStatusMetrics exports the status series of mgr's cache on
// controller-runtime's registry while mgr runs.
func registerStatusMetrics(mgr ctrl.Manager) error {
	var err error
	runningCaches.once.Do(func() {
		err = RegisterStatusMetrics(ctrlmetrics.Registry, latestCache)
	})
	if err != nil {
		return err
	}
	return mgr.Add(statusSource{reader: mgr.GetClient()})
}
