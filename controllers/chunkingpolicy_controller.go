package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/policy"
)

// policyRefIndex indexes Corpora by the ChunkingPolicy they refer to.
const policyRefIndex = "spec.chunkingPolicyRef.name"

// ChunkingPolicyReconciler validates ChunkingPolicies, publishes their
// revision and how many Corpora use them, and keeps a policy that is in use
// from being deleted under its Corpora.
type ChunkingPolicyReconciler struct {
	client.Client
	Recorder events.EventRecorder
}

// +kubebuilder:rbac:groups=parentrag.io,resources=chunkingpolicies,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=parentrag.io,resources=chunkingpolicies/status,verbs=patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one ChunkingPolicy's status up to date. A policy in use
// keeps its finalizer, so deleting it leaves it Terminating, with a
// DeletionBlocked condition and event, until no Corpus refers to it.
func (r *ChunkingPolicyReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var p v1alpha1.ChunkingPolicy
	if err := r.Get(ctx, req.NamespacedName, &p); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	users, err := r.listUsers(ctx, p.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	if !p.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.finalize(ctx, &p, users)
	}
	if err := addFinalizer(ctx, r.Client, &p, PolicyFinalizer); err != nil {
		return ctrl.Result{}, err
	}
	before := p.DeepCopy()
	// An impossible count in the base puts corpora in every patch, so an
	// unused policy shows 0 rather than nothing.
	before.Status.Corpora = -1
	r.summarize(&p, users)
	return ctrl.Result{}, r.Status().Patch(ctx, &p, client.MergeFrom(before))
}

// listUsers returns the Corpora, in every namespace, that refer to the
// policy, as namespace/name, sorted.
func (r *ChunkingPolicyReconciler) listUsers(ctx context.Context, name string) ([]string, error) {
	var corpora v1alpha1.CorpusList
	if err := r.List(ctx, &corpora, client.MatchingFields{policyRefIndex: name}); err != nil {
		return nil, fmt.Errorf("listing corpora: %w", err)
	}
	out := make([]string, 0, len(corpora.Items))
	for _, c := range corpora.Items {
		out = append(out, c.Namespace+"/"+c.Name)
	}
	sort.Strings(out)
	return out, nil
}

// namedCorpora says how many Corpora and which, the first few by name:
// "2 Corpora (a/docs, b/faq)".
func namedCorpora(users []string) string {
	const shown = 5
	names := strings.Join(users[:min(len(users), shown)], ", ")
	if len(users) > shown {
		names += fmt.Sprintf(" and %d more", len(users)-shown)
	}
	return fmt.Sprintf("%s (%s)", count(len(users), "Corpus", "Corpora"), names)
}

// summarize sets the revision, the usage count and the conditions. A spec
// that cannot be compiled (a rule the schema cannot express, such as a
// regular expression that does not compile) stalls the policy.
func (r *ChunkingPolicyReconciler) summarize(p *v1alpha1.ChunkingPolicy, users []string) {
	p.Status.Corpora = len(users)
	p.Status.ParentChunkSize, p.Status.ChildChunkSize = p.Spec.GetParent().ChunkSize, p.Spec.GetChild().ChunkSize
	inUse := metav1.ConditionFalse
	reason, message := v1alpha1.ReasonUnused, "no Corpus uses this policy"
	if len(users) > 0 {
		inUse, reason, message = metav1.ConditionTrue, v1alpha1.ReasonInUse, fmt.Sprintf("%s %s this policy", namedCorpora(users), plural(len(users), "uses", "use"))
	}
	setCondition(&p.Status.Conditions, p.Generation, v1alpha1.ConditionInUse, inUse, reason, message)
	if _, err := policy.Compile(&p.Spec); err != nil {
		markStalled(&p.Status.Conditions, p.Generation, v1alpha1.ReasonPolicyInvalid, stalledMessage(err))
	} else {
		p.Status.Revision = p.Spec.Revision()
		markReady(&p.Status.Conditions, p.Generation, "revision "+p.Status.Revision)
	}
	p.Status.ObservedGeneration = p.Generation
}

// finalize lets a deleted policy go once no Corpus uses it; until then it
// says why it stays.
func (r *ChunkingPolicyReconciler) finalize(ctx context.Context, p *v1alpha1.ChunkingPolicy, users []string) error {
	if len(users) == 0 {
		return removeFinalizer(ctx, r.Client, p, PolicyFinalizer)
	}
	before := p.DeepCopy()
	msg := fmt.Sprintf("deletion waits: %s still %s this policy; point %s at another policy or delete %s",
		namedCorpora(users), plural(len(users), "uses", "use"), plural(len(users), "it", "them"), plural(len(users), "it", "them"))
	blocked := !conditionHasReason(p.Status.Conditions, v1alpha1.ConditionReady, v1alpha1.ReasonDeletionBlocked)
	p.Status.Corpora = len(users)
	markStalled(&p.Status.Conditions, p.Generation, v1alpha1.ReasonDeletionBlocked, msg)
	if blocked {
		r.Recorder.Eventf(p, nil, corev1.EventTypeWarning, v1alpha1.ReasonDeletionBlocked, "Delete", msg)
	}
	return r.Status().Patch(ctx, p, client.MergeFrom(before))
}

// SetupWithManager registers the controller and the Corpus index it uses;
// a Corpus event requeues the policies it refers to.
func (r *ChunkingPolicyReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.Corpus{}, policyRefIndex,
		func(o client.Object) []string { return []string{o.(*v1alpha1.Corpus).Spec.ChunkingPolicyRef.Name} }); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.ChunkingPolicy{}).
		Watches(&v1alpha1.Corpus{}, handler.EnqueueRequestsFromMapFunc(policyOfCorpus)).
		Named("chunkingpolicy").
		Complete(r)
}

// policyOfCorpus maps a Corpus to the policy it refers to.
func policyOfCorpus(_ context.Context, o client.Object) []ctrl.Request {
	c := o.(*v1alpha1.Corpus)
	return []ctrl.Request{{NamespacedName: types.NamespacedName{Name: c.Spec.ChunkingPolicyRef.Name}}}
}

// conditionHasReason reports whether condition typ is present with reason.
func conditionHasReason(conds []metav1.Condition, typ, reason string) bool {
	for _, c := range conds {
		if c.Type == typ {
			return c.Reason == reason
		}
	}
	return false
}
