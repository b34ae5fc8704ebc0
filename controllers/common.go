package controllers

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/sourceset"
)

// FieldManager owns every field the operator writes with server-side apply.
const FieldManager = "parentrag-operator"

// Finalizers.
const (
	// CorpusFinalizer releases a Corpus's revisions before it goes.
	CorpusFinalizer = "parentrag.io/corpus"
	// PolicyFinalizer keeps a ChunkingPolicy while Corpora use it.
	PolicyFinalizer = "parentrag.io/policy"
)

// Labels on objects the operator creates.
const (
	LabelManagedBy  = sourceset.LabelManagedBy
	ManagedByValue  = sourceset.ManagedByValue
	LabelRetriever  = "parentrag.io/retriever"
	ReconcileAtAnno = "reconcile.fluxcd.io/requestedAt"
)

// waitInterval is how soon a controller looks again while it waits for
// something outside its control.
const waitInterval = 10 * time.Second

// stalled marks an error that no retry can fix, with the condition reason
// that names it: the object is Stalled for reason until its spec (or what
// it refers to) changes. The workqueue does not retry it.
func stalled(reason string, err error) error {
	return reconcile.TerminalError(&stallError{reason: reason, err: err})
}

// stallError is an error that stalls an object, carrying its reason.
type stallError struct {
	reason string
	err    error
}

// Error is the message of the error that stalls.
func (e *stallError) Error() string { return e.err.Error() }

// Unwrap returns the error that stalls.
func (e *stallError) Unwrap() error { return e.err }

// stallReason is the reason a stalling error carries, wherever wrapping
// left it; "" for an error that does not stall.
func stallReason(err error) string {
	var s *stallError
	if errors.As(err, &s) {
		return s.reason
	}
	return ""
}

// stalledMessage is the message of an error for a person: without the
// mark that stalled puts on it, wherever wrapping left it.
func stalledMessage(err error) string {
	return strings.ReplaceAll(err.Error(), terminalMark, "")
}

// terminalMark is what reconcile.TerminalError puts before a message.
const terminalMark = "terminal error: "

// isStalled reports whether err was marked with stalled.
func isStalled(err error) bool { return errors.Is(err, reconcile.TerminalError(nil)) }

// setCondition sets one condition with the object's generation.
func setCondition(conds *[]metav1.Condition, generation int64, typ string, status metav1.ConditionStatus, reason, message string) {
	meta.SetStatusCondition(conds, metav1.Condition{
		Type: typ, Status: status, Reason: reason, Message: message, ObservedGeneration: generation,
	})
}

// markReady records success: Ready True, no Reconciling, no Stalled.
func markReady(conds *[]metav1.Condition, generation int64, message string) {
	setCondition(conds, generation, v1alpha1.ConditionReady, metav1.ConditionTrue, v1alpha1.ReasonSucceeded, message)
	meta.RemoveStatusCondition(conds, v1alpha1.ConditionReconciling)
	meta.RemoveStatusCondition(conds, v1alpha1.ConditionStalled)
}

// markReconciling records work in flight: Reconciling True, no Stalled,
// and Ready True left as it is (the active revision still serves). A False
// Ready becomes Unknown, unless keepFailure leaves the last failure visible
// while the work that failed is retried.
func markReconciling(conds *[]metav1.Condition, generation int64, reason, message string, keepFailure bool) {
	setCondition(conds, generation, v1alpha1.ConditionReconciling, metav1.ConditionTrue, reason, message)
	meta.RemoveStatusCondition(conds, v1alpha1.ConditionStalled)
	ready := meta.FindStatusCondition(*conds, v1alpha1.ConditionReady)
	if ready == nil || ready.Status == metav1.ConditionUnknown || (ready.Status == metav1.ConditionFalse && !keepFailure) {
		setCondition(conds, generation, v1alpha1.ConditionReady, metav1.ConditionUnknown, reason, message)
	}
}

// markStalled records that nothing moves until a person acts: Stalled
// True, Ready False, no Reconciling.
func markStalled(conds *[]metav1.Condition, generation int64, reason, message string) {
	setCondition(conds, generation, v1alpha1.ConditionStalled, metav1.ConditionTrue, reason, message)
	setCondition(conds, generation, v1alpha1.ConditionReady, metav1.ConditionFalse, reason, message)
	meta.RemoveStatusCondition(conds, v1alpha1.ConditionReconciling)
}

// markNotReady records a failure that is retried: Ready False with the
// reason, Reconciling True (work continues), no Stalled.
func markNotReady(conds *[]metav1.Condition, generation int64, reason, message string) {
	setCondition(conds, generation, v1alpha1.ConditionReady, metav1.ConditionFalse, reason, message)
	setCondition(conds, generation, v1alpha1.ConditionReconciling, metav1.ConditionTrue, reason, message)
	meta.RemoveStatusCondition(conds, v1alpha1.ConditionStalled)
}

// settled reports whether the conditions say the generation reached Ready
// or Stalled, the two states that move observedGeneration.
func settled(conds []metav1.Condition) bool {
	return meta.IsStatusConditionTrue(conds, v1alpha1.ConditionReady) ||
		meta.IsStatusConditionTrue(conds, v1alpha1.ConditionStalled)
}

// itoa formats an integer for a command-line argument.
func itoa[T ~int | ~int32](n T) string { return strconv.Itoa(int(n)) }

// plural returns one when n is 1 and many otherwise, so that messages
// say "1 document" and "2 documents".
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// count says how many, with the word in the number's form: "1 document",
// "2 documents".
func count(n int, one, many string) string { return fmt.Sprintf("%d %s", n, plural(n, one, many)) }

// revisionCounts says what a revision holds: "1 document, 4 parents, 12
// children".
func revisionCounts(r *v1alpha1.RevisionStatus) string {
	return count(r.Documents, "document", "documents") + ", " + count(r.Parents, "parent", "parents") + ", " + count(r.Children, "child", "children")
}

// kindOf names the kind of obj, as kubectl does ("ConfigMap").
func kindOf(obj client.Object, scheme *runtime.Scheme) string {
	if gvk, err := apiutil.GVKForObject(obj, scheme); err == nil {
		return gvk.Kind
	}
	return "object"
}

// namedApply is what every generated apply configuration tells of itself.
type namedApply interface {
	GetKind() *string
	GetName() *string
}

// describeApply names the kind and name of an apply configuration, as
// "Role docs-indexer", for a message a person reads.
func describeApply(obj any) string {
	a, ok := obj.(namedApply)
	if !ok || a.GetKind() == nil {
		return "object"
	}
	if a.GetName() == nil {
		return *a.GetKind()
	}
	return *a.GetKind() + " " + *a.GetName()
}

// markSuspended records that reconciliation is suspended: Ready keeps its
// status (what served before still serves) with reason Suspended and the
// message, and neither Reconciling nor Stalled is set, so a person and a
// health check tell a suspended object from a stuck one.
func markSuspended(conds *[]metav1.Condition, generation int64, message string) {
	status := metav1.ConditionFalse
	if meta.IsStatusConditionTrue(*conds, v1alpha1.ConditionReady) {
		status = metav1.ConditionTrue
	}
	setCondition(conds, generation, v1alpha1.ConditionReady, status, v1alpha1.ReasonSuspended, message)
	meta.RemoveStatusCondition(conds, v1alpha1.ConditionReconciling)
	meta.RemoveStatusCondition(conds, v1alpha1.ConditionStalled)
}

// suspendedMessage says that reconciliation is suspended and whether a
// change of the spec waits: observedGeneration does not move while
// suspended, so it names the generation last applied.
func suspendedMessage(generation, observed int64) string {
	switch {
	case observed == 0:
		return fmt.Sprintf("reconciliation is suspended (spec.suspend): generation %d waits, none was applied yet; set spec.suspend to false to resume", generation)
	case observed < generation:
		return fmt.Sprintf("reconciliation is suspended (spec.suspend): generation %d waits, generation %d was the last applied; set spec.suspend to false to resume", generation, observed)
	}
	return "reconciliation is suspended (spec.suspend); set spec.suspend to false to resume"
}
