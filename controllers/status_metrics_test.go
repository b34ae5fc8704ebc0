package controllers_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// TestStatusMetricsFollowConditions checks the operator's /metrics series
// of a Corpus waiting for its policy, then Ready on a revision, and of its
// Retriever, as Prometheus would scrape them from the manager's registry;
// deleting the Corpus removes its series.
func TestStatusMetricsFollowConditions(t *testing.T) {
	ns := newNamespace(t)
	name := uniqueName("metrics")
	c := inlineCorpus(ns, name, sampleDocs()...)
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waiting := fmt.Sprintf(`parentrag_corpus_status_condition{name=%q,namespace=%q,reason="PolicyNotFound",status="False",type="Ready"} 1`, c.Name, ns)
	eventually(t, 30*time.Second, waiting, func() (bool, error) {
		got := statusSeries(t, c.Name)
		return contains(got, waiting), fmt.Errorf("series:\n%s", got)
	})

	if err := k8s.Create(context.Background(), &v1alpha1.ChunkingPolicy{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	rt := newRetriever(t, ns, uniqueName("metrics"), c.Name)
	want := []string{
		fmt.Sprintf(`parentrag_corpus_status_condition{name=%q,namespace=%q,reason="Succeeded",status="True",type="Ready"} 1`, c.Name, ns),
		fmt.Sprintf(`parentrag_corpus_active_revision_info{name=%q,namespace=%q,revision=%q} 1`, c.Name, ns, c.Status.ActiveRevision.Name),
		fmt.Sprintf(`parentrag_corpus_source_errors{name=%q,namespace=%q} 0`, c.Name, ns),
		fmt.Sprintf(`parentrag_retriever_status_condition{name=%q,namespace=%q,reason=`, rt.Name, ns),
		`parentrag_status_scrape_error{kind="corpora"} 0`,
		`parentrag_status_scrape_error{kind="retrievers"} 0`,
	}
	eventually(t, 30*time.Second, "the Ready Corpus's series", func() (bool, error) {
		got := statusSeries(t, c.Name) + statusSeries(t, rt.Name) + statusSeries(t, "parentrag_status_scrape_error")
		for _, w := range want {
			if !contains(got, w) {
				return false, fmt.Errorf("no %s in\n%s", w, got)
			}
		}
		if contains(got, waiting) {
			return false, fmt.Errorf("the PolicyNotFound series is still there:\n%s", got)
		}
		return true, nil
	})

	if err := k8s.Delete(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the deleted Corpus's series to go", func() (bool, error) {
		got := statusSeries(t, c.Name)
		return !contains(got, "parentrag_corpus_"), fmt.Errorf("series left:\n%s", got)
	})
}

// statusSeries gathers controller-runtime's registry, as the operator's
// /metrics serves it, and returns the parentrag_ series whose text holds
// match, one a line in the exposition format, sorted.
func statusSeries(t *testing.T, match string) string {
	t.Helper()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), "parentrag_") {
			continue
		}
		for _, m := range f.GetMetric() {
			if line := seriesLine(f.GetName(), m); strings.Contains(line, match) {
				lines = append(lines, line)
			}
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// seriesLine writes one gauge as name{labels} value, labels sorted by name
// as the registry gives them.
func seriesLine(name string, m *dto.Metric) string {
	labels := make([]string, len(m.GetLabel()))
	for i, l := range m.GetLabel() {
		labels[i] = fmt.Sprintf("%s=%q", l.GetName(), l.GetValue())
	}
	return fmt.Sprintf("%s{%s} %g", name, strings.Join(labels, ","), m.GetGauge().GetValue())
}
