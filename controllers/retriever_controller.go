package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// RetrieverReconciler runs a query Deployment, Service and least-privilege
// identity for each Retriever, serving its Corpus's active revision.
type RetrieverReconciler struct {
	client.Client
	// APIReader reads the Deployment just applied; nil reads the cache.
	APIReader client.Reader
	Recorder  events.EventRecorder
	// DefaultImage runs the query server when a Retriever names no image:
	// the operator's own image.
	DefaultImage string
	// manifests remembers what the revisions' manifests say.
	manifests revisionManifests
}

// +kubebuilder:rbac:groups=parentrag.io,resources=retrievers,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=parentrag.io,resources=retrievers/status,verbs=patch
// +kubebuilder:rbac:groups=parentrag.io,resources=retrievers/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=create;patch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles,verbs=get;list;watch;create;patch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=create;patch

// retrieverState is what one reconcile learns.
type retrieverState struct {
	retriever  *v1alpha1.Retriever
	deployment *appsv1.Deployment
	revision   string
	// loaded are the revisions the Deployment's ReplicaSets still run.
	loaded []string
	// suspended is true while spec.suspend holds reconciliation.
	suspended bool
	reason    string
	message   string
	// trouble says why a pod of the rollout cannot run, nil when none is
	// stuck.
	trouble *podTrouble
}

// Reconcile applies the Retriever's objects for the Corpus's active
// revision and reports the rollout in status.
func (r *RetrieverReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
	var rt v1alpha1.Retriever
	if err := r.Get(ctx, req.NamespacedName, &rt); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !rt.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.releaseAuthBinding(ctx, &rt)
	}
	base := rt.DeepCopy()
	s := &retrieverState{retriever: &rt}
	defer func() {
		r.summarize(s, result, err)
		if perr := patchStatus(ctx, r.Client, &rt, base); perr != nil {
			err = errors.Join(err, perr)
		}
	}()
	// After the deferred summary, so that the status says it is suspended.
	if s.suspended = rt.Spec.Suspend; s.suspended {
		return ctrl.Result{}, nil
	}
	if err := r.syncAuthFinalizer(ctx, &rt); err != nil {
		return ctrl.Result{}, err
	}
	plan, result, err := r.plan(ctx, s)
	if err != nil || !result.IsZero() {
		return result, err
	}
	// After plan, which scales down for a Corpus going away whatever the
	// Secret.
	if result, err := r.waitForAuthSecret(ctx, s); err != nil || !result.IsZero() {
		return result, err
	}
	if err := r.apply(ctx, plan); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.observe(ctx, s, plan)
}

// plan reads the Corpus and the ConfigMaps of the revision the Retriever's
// track serves. Without a Corpus or an active revision it waits.
func (r *RetrieverReconciler) plan(ctx context.Context, s *retrieverState) (*queryPlan, ctrl.Result, error) {
	rt := s.retriever
	var c v1alpha1.Corpus
	err := r.Get(ctx, client.ObjectKey{Namespace: rt.Namespace, Name: rt.Spec.CorpusRef.Name}, &c)
	if apierrors.IsNotFound(err) || (err == nil && !c.DeletionTimestamp.IsZero()) {
		return nil, ctrl.Result{RequeueAfter: waitInterval}, r.scaleToZero(ctx, s, !apierrors.IsNotFound(err))
	}
	if err != nil {
		return nil, ctrl.Result{}, fmt.Errorf("reading Corpus %s: %w", rt.Spec.CorpusRef.Name, err)
	}
	served := c.RevisionFor(rt.GetTrack())
	if served == nil {
		s.reason, s.message = v1alpha1.ReasonCorpusNotReady, fmt.Sprintf("Corpus %s has no active revision yet", c.Name)
		return nil, ctrl.Result{RequeueAfter: waitInterval}, nil
	}
	s.revision = served.Name
	if msg := claimAccessProblem(rt, &c); msg != "" {
		return nil, ctrl.Result{}, stalled(v1alpha1.ReasonClaimAccessMode, fmt.Errorf("%s", msg))
	}
	if msg := searchModeProblem(rt, &c); msg != "" {
		return nil, ctrl.Result{}, stalled(v1alpha1.ReasonSearchMode, fmt.Errorf("%s", msg))
	}
	names, claim, err := r.revisionStore(ctx, &c, s.revision)
	if apierrors.IsNotFound(err) {
		// The Corpus stores a revision's lost ConfigMaps again
		// (repairRevision); its status update brings the Retriever back.
		s.reason = v1alpha1.ReasonRevisionNotStored
		s.message = fmt.Sprintf("the manifest ConfigMap %s of revision %s is gone; Corpus %s stores it again, and the query pods keep serving meanwhile",
			c.RevisionObjectName(s.revision), s.revision, c.Name)
		return nil, ctrl.Result{RequeueAfter: waitInterval}, nil
	}
	if err != nil {
		return nil, ctrl.Result{}, err
	}
	if s.loaded, err = loadedRevisions(ctx, r.Client, rt.Namespace, rt.Name); err != nil {
		return nil, ctrl.Result{}, err
	}
	for _, rev := range s.loaded {
		// Until no ReplicaSet runs it, a pod of a revision being replaced
		// (one rollout or several overlapping) that restarts must still be
		// able to load it; the Corpus keeps it as long.
		if rev == s.revision {
			continue
		}
		if previous, _, err := r.revisionStore(ctx, &c, rev); err == nil {
			names = append(names, previous...)
		}
	}
	image := rt.Spec.Image
	if image == "" {
		image = r.DefaultImage
	}
	// Revisions may share shards (those of their common segments): each
	// name is granted once.
	names = slices.Compact(slices.Sorted(slices.Values(names)))
	return &queryPlan{retriever: rt, corpus: &c, revision: s.revision, configMaps: names, claim: claim, image: image}, ctrl.Result{}, nil
}

// revisionStore says where a revision of c is: the ConfigMaps that hold
// it, or the claim that does (its manifest ConfigMap says which).
// It asks the API server for the manifest's metadata, so that one just
// deleted is known at once, and reads a manifest whole only once.
func (r *RetrieverReconciler) revisionStore(ctx context.Context, c *v1alpha1.Corpus, revision string) ([]string, string, error) {
	stored, err := r.manifests.get(ctx, nil, r.Client, client.ObjectKey{Namespace: c.Namespace, Name: c.RevisionObjectName(revision)})
	if err != nil {
		return nil, "", fmt.Errorf("reading revision %s of Corpus %s: %w", revision, c.Name, err)
	}
	return stored.names, stored.status.Claim, nil
}

// claimAccessProblem explains why more than one replica cannot mount the
// Corpus's claims, "" when they can.
func claimAccessProblem(rt *v1alpha1.Retriever, c *v1alpha1.Corpus) string {
	if !c.UsesClaims() || rt.GetReplicas() <= 1 {
		return ""
	}
	modes := c.Spec.ParentStore.PersistentVolumeClaim.AccessModes
	for _, m := range modes {
		if m == corev1.ReadOnlyMany || m == corev1.ReadWriteMany {
			return ""
		}
	}
	if len(modes) == 0 {
		modes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	}
	return fmt.Sprintf("%d replicas cannot all mount Corpus %s's claims (access modes %v): set its parentStore.persistentVolumeClaim.accessModes to include ReadOnlyMany or ReadWriteMany, or use 1 replica",
		rt.GetReplicas(), c.Name, modes)
}

// searchModeProblem explains why the Retriever's search mode cannot
// search the Corpus's vectors, "" when it can: Dense and Hybrid need an
// embedding model.
func searchModeProblem(rt *v1alpha1.Retriever, c *v1alpha1.Corpus) string {
	s := rt.Spec.Search
	if s == nil || s.Mode == "" || s.Mode == v1alpha1.SearchSparse || c.Spec.Embedding.IsOpenAI() {
		return ""
	}
	return fmt.Sprintf("search.mode %s needs an embedding model's vectors, and Corpus %s embeds with the builtin BM25 embedder alone: set its embedding.openAI, or search.mode Sparse", s.Mode, c.Name)
}

// apply writes every object with server-side apply under one field
// manager; the Deployment goes last, once its identity can read the
// revision and, in Kubernetes auth mode, review its callers. A
// NetworkPolicy no longer asked for is deleted.
func (r *RetrieverReconciler) apply(ctx context.Context, p *queryPlan) error {
	objs := []runtime.ApplyConfiguration{p.serviceAccount(), p.role(), p.roleBinding(), p.service()}
	objs = append(append(objs, p.authObjects()...), p.networkPolicyObjects()...)
	objs = append(objs, p.deployment())
	for _, obj := range objs {
		if err := r.Apply(ctx, obj, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s: %w", describeApply(obj), err)
		}
	}
	return r.removeNetworkPolicy(ctx, p.retriever)
}

// observe reads the Deployment's rollout into status. The serving revision
// moves only once every replica runs the new revision and is available.
// The Deployment is read from the API server: the cache can still hold it
// as it was before the apply, whose finished rollout would call a changed
// pod template rolled out, and the Retriever Ready before its pods carry
// the change.
func (r *RetrieverReconciler) observe(ctx context.Context, s *retrieverState, p *queryPlan) error {
	var reader client.Reader = r.Client
	if r.APIReader != nil {
		reader = r.APIReader
	}
	var d appsv1.Deployment
	err := reader.Get(ctx, client.ObjectKey{Namespace: p.retriever.Namespace, Name: p.retriever.Name}, &d)
	if apierrors.IsNotFound(err) {
		// Gone (deleted under the reconcile); its watch event requeues.
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading Deployment: %w", err)
	}
	s.deployment = &d
	st := &s.retriever.Status
	st.DesiredRevision = s.revision
	st.LoadedRevisions = s.loaded
	st.Replicas, st.ReadyReplicas = d.Status.Replicas, d.Status.ReadyReplicas
	st.URL = fmt.Sprintf("http://%s.%s.svc:%d", p.retriever.Name, p.retriever.Namespace, p.retriever.GetServicePort())
	if rolledOut(&d) {
		if st.ServingRevision != s.revision {
			r.Recorder.Eventf(s.retriever, nil, corev1.EventTypeNormal, "Serving", "Rollout", "serving revision %s", s.revision)
		}
		st.ServingRevision = s.revision
		return nil
	}
	pods, err := podsOf(ctx, r.Client, d.Namespace, p.selectorLabels())
	if err != nil {
		return err
	}
	s.trouble = firstTrouble(pods)
	return nil
}

// rolledOut reports whether the Deployment's latest generation runs on
// every replica and every replica is available.
func rolledOut(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	return d.Status.ObservedGeneration >= d.Generation &&
		d.Status.UpdatedReplicas == want && d.Status.Replicas == want && d.Status.AvailableReplicas == want
}

// SetupWithManager watches Retrievers, the objects they own and the
// Corpora they serve.
func (r *RetrieverReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.Retriever{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Owns(&rbacv1.Role{}).
		Owns(&networkingv1.NetworkPolicy{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(retrieverOfReplicaSet)).
		Watches(&appsv1.ReplicaSet{}, handler.EnqueueRequestsFromMapFunc(retrieverOfReplicaSet)).
		Watches(&v1alpha1.Corpus{}, handler.EnqueueRequestsFromMapFunc(r.retrieversOfCorpus)).
		Named("retriever").
		Complete(r)
}

// retrieversOfCorpus maps a Corpus to the Retrievers that serve it.
func (r *RetrieverReconciler) retrieversOfCorpus(ctx context.Context, o client.Object) []ctrl.Request {
	var list v1alpha1.RetrieverList
	if err := r.List(ctx, &list, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	var out []ctrl.Request
	for _, rt := range list.Items {
		if rt.Spec.CorpusRef.Name == o.GetName() {
			out = append(out, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&rt)})
		}
	}
	return out
}

// retrieverOfReplicaSet maps a query ReplicaSet or pod to its Retriever,
// whose loaded revisions follow the ReplicaSets that still run and whose
// conditions say why a pod cannot run.
func retrieverOfReplicaSet(_ context.Context, o client.Object) []ctrl.Request {
	name := o.GetLabels()[LabelRetriever]
	if name == "" {
		return nil
	}
	return []ctrl.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: name}}}
}
