package controllers

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/cmbundle"
)

// summarize writes the conditions and observedGeneration from how the
// reconcile ended: suspended, an error that stalls, an error that is
// retried, work in flight, a wait, or success. While suspended,
// observedGeneration stays at the generation last applied.
func (r *CorpusReconciler) summarize(s *corpusState, result ctrl.Result, err error) {
	c := s.corpus
	gen := c.Generation
	if s.suspended {
		markSuspended(&c.Status.Conditions, gen, withActive(c, suspendedMessage(gen, c.Status.ObservedGeneration)))
		return
	}
	setSourcesCondition(c)
	switch {
	case err != nil && isStalled(err):
		markStalled(&c.Status.Conditions, gen, orDefault(stallReason(err), v1alpha1.ReasonProgressing), withActive(c, stalledMessage(err)))
	case err != nil:
		markNotReady(&c.Status.Conditions, gen, orDefault(s.reason, v1alpha1.ReasonProgressing), withActive(c, stalledMessage(err)))
	case s.building || s.superseded:
		// Work in flight, not a failure: Ready stays True on the active
		// revision.
		markReconciling(&c.Status.Conditions, gen, orDefault(s.reason, v1alpha1.ReasonIndexing), s.message, false)
	case !result.IsZero():
		markNotReady(&c.Status.Conditions, gen, orDefault(s.reason, v1alpha1.ReasonProgressing), withActive(c, s.message))
	default:
		a := c.Status.ActiveRevision
		msg := fmt.Sprintf("revision %s: %s", a.Name, revisionCounts(a))
		if s.hold != "" {
			msg += "; " + s.hold
		}
		markReady(&c.Status.Conditions, gen, msg)
		setSourceRevision(s)
	}
	if settled(c.Status.Conditions) {
		c.Status.ObservedGeneration = gen
	}
	if v, ok := c.Annotations[ReconcileAtAnno]; ok {
		c.Status.LastHandledReconcileAt = v
	}
}

// setSourcesCondition reports whether every source was read in full.
func setSourcesCondition(c *v1alpha1.Corpus) {
	if len(c.Status.SourceErrors) == 0 {
		setCondition(&c.Status.Conditions, c.Generation, v1alpha1.ConditionSourcesReady, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, "every source was read")
		return
	}
	first := c.Status.SourceErrors[0]
	msg := fmt.Sprintf("%s; first: source %s", count(len(c.Status.SourceErrors), "problem", "problems"), first.Source)
	if first.Document != "" {
		msg += ", document " + first.Document
	}
	setCondition(&c.Status.Conditions, c.Generation, v1alpha1.ConditionSourcesReady, metav1.ConditionFalse, v1alpha1.ReasonSourceError, msg+": "+first.Message)
}

// withActive adds which revision keeps serving to a failure message.
func withActive(c *v1alpha1.Corpus, msg string) string {
	if c.Status.ActiveRevision == nil {
		return msg
	}
	return strings.TrimSpace(msg + "; revision " + c.Status.ActiveRevision.Name + " keeps serving")
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// corporaOfPolicy maps a ChunkingPolicy to the Corpora that use it.
func (r *CorpusReconciler) corporaOfPolicy(ctx context.Context, o client.Object) []ctrl.Request {
	var list v1alpha1.CorpusList
	if err := r.List(ctx, &list, client.MatchingFields{policyRefIndex: o.GetName()}); err != nil {
		return nil
	}
	return requestsFor(list.Items, func(*v1alpha1.Corpus) bool { return true })
}

// corporaOfConfigMap maps a source ConfigMap to the Corpora in its
// namespace that read it by name or by selector. The operator's own
// revision ConfigMaps map to nothing.
func (r *CorpusReconciler) corporaOfConfigMap(ctx context.Context, o client.Object) []ctrl.Request {
	if o.GetLabels()[LabelManagedBy] == ManagedByValue {
		// An indexing Job reports in its status ConfigMap.
		if o.GetLabels()[cmbundle.LabelRole] == roleIndexStatus {
			return []ctrl.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: o.GetLabels()[cmbundle.LabelCorpus]}}}
		}
		return nil
	}
	var list v1alpha1.CorpusList
	if err := r.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	return requestsFor(list.Items, func(c *v1alpha1.Corpus) bool { return readsConfigMap(c, o.GetName(), o.GetLabels()) })
}

// readsConfigMap reports whether a source of c names or selects cm, or
// its quality gate reads golden queries from it.
func readsConfigMap(c *v1alpha1.Corpus, name string, cmLabels map[string]string) bool {
	if g := c.QualityGate(); g != nil && g.GoldenQueries.Name == name {
		return true
	}
	for _, src := range c.Spec.Sources {
		if src.ConfigMap != nil && src.ConfigMap.Name == name {
			return true
		}
		if src.Selector != nil {
			sel, err := metav1.LabelSelectorAsSelector(src.Selector)
			if err == nil && sel.Matches(labels.Set(cmLabels)) {
				return true
			}
		}
	}
	return false
}

// requestsFor returns a request for every Corpus that keep accepts.
func requestsFor(items []v1alpha1.Corpus, keep func(*v1alpha1.Corpus) bool) []ctrl.Request {
	var out []ctrl.Request
	for i := range items {
		if keep(&items[i]) {
			out = append(out, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&items[i])})
		}
	}
	return out
}
