package controllers

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// TestMessagesNameWhatAPersonActsOn checks the words of conditions and
// events: no mark of the workqueue, no Go type, numbers in agreement and
// the objects named.
func TestMessagesNameWhatAPersonActsOn(t *testing.T) {
	c := &v1alpha1.Corpus{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "docs"}}
	for _, tc := range []struct{ got, want string }{
		{stalledMessage(fmt.Errorf("building revision abc: %w", stalled(v1alpha1.ReasonPolicyInvalid, fmt.Errorf("ChunkingPolicy p: bad")))), "building revision abc: ChunkingPolicy p: bad"},
		{stalledMessage(stalled(v1alpha1.ReasonNoDocuments, fmt.Errorf("no document"))), "no document"},
		{describeApply(indexerRole(c, jobObjectsOf(c, "r1"), nil, nil)), "Role docs-indexer"},
		{describeApply(indexerServiceAccount(c)), "ServiceAccount docs-indexer"},
		{kindOf(&corev1.ConfigMap{}, NewScheme()), "ConfigMap"},
		{revisionCounts(&v1alpha1.RevisionStatus{Documents: 1, Parents: 1, Children: 1}), "1 document, 1 parent, 1 child"},
		{revisionCounts(&v1alpha1.RevisionStatus{Documents: 2, Parents: 0, Children: 5}), "2 documents, 0 parents, 5 children"},
		{namedCorpora([]string{"a/docs"}), "1 Corpus (a/docs)"},
		{namedCorpora([]string{"a/1", "a/2", "a/3", "a/4", "a/5", "a/6", "a/7"}), "7 Corpora (a/1, a/2, a/3, a/4, a/5 and 2 more)"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestSourcesConditionCountsProblems says "1 problem", not "1 problems".
func TestSourcesConditionCountsProblems(t *testing.T) {
	c := &v1alpha1.Corpus{}
	c.Status.SourceErrors = []v1alpha1.SourceError{{Source: "docs", Message: "ConfigMap handbook not found"}}
	setSourcesCondition(c)
	want := "1 problem; first: source docs: ConfigMap handbook not found"
	if got := c.Status.Conditions[0].Message; got != want {
		t.Fatalf("SourcesReady says %q, want %q", got, want)
	}
}

// TestNoDocumentsSaysWhichSourceFailed names the missing ConfigMap.
func TestNoDocumentsSaysWhichSourceFailed(t *testing.T) {
	errs := []v1alpha1.SourceError{{Source: "handbook", Message: "ConfigMap handbook not found"}, {Source: "faq", Message: "ConfigMap faq not found"}}
	want := ": source handbook: ConfigMap handbook not found (and 1 more problem, see status.sourceErrors)"
	if got := sourceErrorsSummary(errs); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestMissingPinIsAWarning: a pin on a revision no longer retained needs
// a person, so its event is a Warning; a pin that holds is Normal.
func TestMissingPinIsAWarning(t *testing.T) {
	c := &v1alpha1.Corpus{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "docs"}}
	c.Status.History = []v1alpha1.RevisionStatus{{Name: "r1"}}
	for _, tc := range []struct {
		pin, want string
	}{{"gone", "Warning " + v1alpha1.ReasonPinnedRevisionMissing}, {"r1", "Normal " + v1alpha1.ReasonPinned}} {
		rec := events.NewFakeRecorder(1)
		r := &CorpusReconciler{Recorder: rec}
		r.announceCandidate(c, nil, planPin(c, v1alpha1.RevisionStatus{Name: "r2"}, tc.pin))
		select {
		case ev := <-rec.Events:
			if !strings.HasPrefix(ev, tc.want) {
				t.Errorf("pin %s: event %q, want %q", tc.pin, ev, tc.want)
			}
		default:
			t.Errorf("pin %s: no event", tc.pin)
		}
	}
}
