package controllers

import (
	"context"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/sourceset"
)

// TestEachStallNamesItsReason drives the steps of the Corpus reconciler
// that stall without reading the cluster, and checks that each error
// carries its own reason and that the Stalled condition says it, through
// the wrapping a build adds.
func TestEachStallNamesItsReason(t *testing.T) {
	r := &CorpusReconciler{}
	for _, tc := range []struct {
		name string
		step func(*corpusState) error
		want string
	}{{
		name: "a quality gate whose threshold does not parse",
		step: func(*corpusState) error {
			_, err := gateSpec(&v1alpha1.QualityGate{MinHitRate: "1.5"})
			return err
		},
		want: v1alpha1.ReasonGoldenQueriesInvalid,
	}, {
		name: "a quality gate whose maxDrop does not parse",
		step: func(*corpusState) error {
			_, err := gateSpec(&v1alpha1.QualityGate{MinHitRate: "0.5", MaxDrop: "lots"})
			return err
		},
		want: v1alpha1.ReasonGoldenQueriesInvalid,
	}, {
		name: "builtin embedding parameters out of range",
		step: func(s *corpusState) error {
			s.corpus.Spec.Embedding = &v1alpha1.Embedding{Builtin: &v1alpha1.BuiltinEmbedding{B: "2"}}
			_, err := r.resolveEmbedder(context.Background(), s)
			return err
		},
		want: v1alpha1.ReasonEmbeddingError,
	}, {
		name: "an embedding endpoint that is no URL",
		step: func(s *corpusState) error {
			s.corpus.Spec.Embedding = &v1alpha1.Embedding{OpenAI: &v1alpha1.OpenAIEmbedding{Endpoint: "::not a url", Model: "m"}}
			_, err := r.resolveEmbedder(context.Background(), s)
			return err
		},
		want: v1alpha1.ReasonEmbeddingError,
	}, {
		name: "a source reference across namespaces",
		step: func(s *corpusState) error {
			_, err := r.sourceBlocked(s, &sourceset.Blocked{Reason: v1alpha1.ReasonCrossNamespaceRefDenied, Message: "denied", Stalled: true})
			return err
		},
		want: v1alpha1.ReasonCrossNamespaceRefDenied,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			s := &corpusState{corpus: &v1alpha1.Corpus{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "docs", Generation: 1}}}
			err := tc.step(s)
			if err == nil || !isStalled(err) {
				t.Fatalf("error %v, want one that stalls", err)
			}
			if got := stallReason(fmt.Errorf("building revision r1: %w", err)); got != tc.want {
				t.Errorf("reason %q, want %q", got, tc.want)
			}
			r.summarize(s, ctrl.Result{}, fmt.Errorf("building revision r1: %w", err))
			c := meta.FindStatusCondition(s.corpus.Status.Conditions, v1alpha1.ConditionStalled)
			if c == nil || c.Reason != tc.want {
				t.Errorf("Stalled condition %+v, want reason %s", c, tc.want)
			}
		})
	}
}
