package controllers

import (
	"context"
	"errors"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/source/remote"
	"github.com/parentrag/parentrag/internal/sourceset"
	"github.com/parentrag/parentrag/internal/telemetry"
)

// CorpusReconciler indexes Corpora: it resolves the policy and the sources,
// builds a revision beside the active one, stores it in immutable
// ConfigMaps, promotes it and garbage-collects revisions past retention.
type CorpusReconciler struct {
	client.Client
	Recorder events.EventRecorder
	// MaxConcurrentBuilds bounds how many Corpora index at once (default 2).
	MaxConcurrentBuilds int
	// ProgressInterval is the least time between progress updates in
	// status, and between checks that a build is still wanted (default 2s).
	ProgressInterval time.Duration
	// Image runs indexing Jobs when a Corpus names none.
	Image string
	// EmbeddingCacheDir holds one embedding cache per Corpus (default: a
	// directory in os.TempDir()).
	EmbeddingCacheDir string
	// RemoteMemory bounds the text of remote documents (URL and sourceRef
	// sources) the operator holds at once, for every Corpus together
	// (default DefaultRemoteMemory).
	RemoteMemory *remote.Memory
	// fetchers keep URL sources between reconciles: with their documents
	// for builds in process, without them (leanFetchers) for Jobs.
	fetchers, leanFetchers sourceset.Fetchers
	// APIReader reads what must not come from the cache, such as the
	// ConfigMaps of a revision just stored; the client when nil.
	APIReader client.Reader
	// MetadataCache reads the ConfigMaps' metadata the manager's informer
	// holds (the client reads no ConfigMap from a cache), so that checking
	// a revision's shards costs no request; unset, the check asks the API
	// server.
	MetadataCache client.Reader
	// NoCrossNamespaceRefs refuses sourceRef sources in other namespaces.
	NoCrossNamespaceRefs bool
	// SecretGoneGrace is how long a deleted Corpus waits for its vector
	// store's Secret to come back (default DefaultSecretGoneGrace).
	SecretGoneGrace time.Duration
	// manifests remembers what the revisions' manifests say.
	manifests revisionManifests
	// sourceConfigMaps keeps the source ConfigMaps read, so that a
	// reconcile reads whole only those that changed.
	sourceConfigMaps sourceset.ConfigMapCache
	// watchedSourceKinds are the Flux source kinds installed when the
	// controller started, whose changes it watches.
	watchedSourceKinds map[v1alpha1.SourceRefKind]bool
	// indexClients reaches the databases of a kind of external index;
	// nil, the real ones (Milvus, PostgreSQL). Tests hold them in memory.
	indexClients func(*indexKind) externalIndex
}

// reader returns the uncached reader, or the client.
func (r *CorpusReconciler) reader() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}

// metadataReader returns where ConfigMaps' metadata is listed without a
// request: the manager's informer, or the client (the API server) where
// there is none.
func (r *CorpusReconciler) metadataReader() client.Reader {
	if r.MetadataCache != nil {
		return r.MetadataCache
	}
	return r.Client
}

// +kubebuilder:rbac:groups=parentrag.io,resources=corpora,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=parentrag.io,resources=corpora/status,verbs=patch
// +kubebuilder:rbac:groups=parentrag.io,resources=corpora/finalizers,verbs=update
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get
// +kubebuilder:rbac:groups="",resources=persistentvolumeclaims,verbs=create;delete
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=create;patch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles;rolebindings,verbs=create;patch

// corpusState is what the steps of one reconcile learn and pass on.
type corpusState struct {
	corpus   *v1alpha1.Corpus
	compiled *policy.Compiled
	sources  *sourceset.Set
	embedder embed.Embedder
	embedCfg bundle.Embedder
	revision string
	// vectorStore locates the revision's children: zero for the embedded
	// store, a Milvus collection or PostgreSQL table otherwise.
	vectorStore bundle.VectorStoreRef
	built       *v1alpha1.RevisionStatus
	progress    *progressPatcher
	// reason and message explain a wait, or an error that is retried, in
	// the conditions; an error that stalls carries its own reason.
	reason, message string
	// building is true while an indexing Job builds the revision.
	building bool
	// hold says why a built revision is not active (pinned, or awaiting
	// promotion); the Corpus is still Ready on its active revision.
	hold string
	// suspended is true while spec.suspend holds reconciliation.
	suspended bool
	// superseded is true when a change stopped the build in flight; the
	// active revision still serves while the new one is built.
	superseded bool
}

// releaseSources gives back what the documents of the state's remote
// sources take of the operator's memory for them, once they are no
// longer used.
func (s *corpusState) releaseSources() {
	if s.sources != nil {
		s.sources.Release()
	}
}

// corpusStep is one step of a reconcile. A step returns a non-zero result
// to wait, an error to stop; the next step runs otherwise.
type corpusStep func(ctx context.Context, s *corpusState) (ctrl.Result, error)

// Reconcile runs the steps for one Corpus and always writes a status that
// says where it stands, with kstatus conditions.
func (r *CorpusReconciler) Reconcile(ctx context.Context, req ctrl.Request) (result ctrl.Result, err error) {
	ctx, span := startReconcile(ctx, req)
	defer func() { telemetry.End(span, err) }()
	// From the API server, not the cache: a reconcile queued by this
	// controller's own writes must see them, or it would verify and
	// promote a revision again.
	var c v1alpha1.Corpus
	if err := r.reader().Get(ctx, req.NamespacedName, &c); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !c.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, &c)
	}
	if err := addFinalizer(ctx, r.Client, &c, CorpusFinalizer); err != nil {
		return ctrl.Result{}, err
	}
	base := c.DeepCopy()
	s := &corpusState{corpus: &c, progress: r.newProgressPatcher(ctx, &c, base)}
	// Last: the documents of remote sources are used until the reconcile
	// ends, then left to the caches, which drop them when room is needed.
	defer s.releaseSources()
	defer func() {
		r.summarize(s, result, err)
		if perr := patchStatus(ctx, r.Client, &c, base); perr != nil {
			err = errors.Join(err, perr)
		}
	}()
	// After the deferred summary, so that the status says it is suspended.
	if s.suspended = c.Spec.Suspend; s.suspended {
		log.FromContext(ctx).V(1).Info("reconciliation is suspended")
		return ctrl.Result{}, nil
	}
	for _, step := range []corpusStep{r.resolvePolicy, r.readSources, r.resolveEmbedder, r.computeRevision, r.ensureRevision, r.checkRevision, r.checkPinnedRevision, r.promote, r.pointStableName, r.collectGarbage} {
		if result, err = step(ctx, s); err != nil || !result.IsZero() {
			return result, err
		}
	}
	return ctrl.Result{}, nil
}

// SetupWithManager watches Corpora, the policies, ConfigMaps and Flux
// source objects they read, and the revision ConfigMaps they own (a
// deleted one is stored again). ConfigMaps are watched as metadata
// only: their names and labels say which Corpora read them, and the
// Corpora read their data from the API server.
func (r *CorpusReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.MaxConcurrentBuilds <= 0 {
		r.MaxConcurrentBuilds = 2
	}
	r.leanFetchers.Lean = true
	if r.RemoteMemory == nil {
		r.RemoteMemory = remote.NewMemory(DefaultRemoteMemory)
	}
	r.fetchers.Memory, r.leanFetchers.Memory = r.RemoteMemory, r.RemoteMemory
	b := ctrl.NewControllerManagedBy(mgr).
		For(&v1alpha1.Corpus{}).
		Owns(&batchv1.Job{}).
		Watches(&v1alpha1.ChunkingPolicy{}, handler.EnqueueRequestsFromMapFunc(r.corporaOfPolicy)).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.corporaOfConfigMap), builder.OnlyMetadata).
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(corpusOfStoredConfigMap), builder.OnlyMetadata, builder.WithPredicates(deletedOnly())).
		Watches(&v1alpha1.Retriever{}, handler.EnqueueRequestsFromMapFunc(corpusOfRetriever))
	if err := r.watchSources(mgr, b); err != nil {
		return err
	}
	return b.WithOptions(controller.Options{MaxConcurrentReconciles: r.MaxConcurrentBuilds}).
		Named("corpus").
		Complete(r)
}

// corpusOfRetriever maps a Retriever to its Corpus, whose Milvus alias or
// PostgreSQL view moves once its Retrievers serve the active revision.
func corpusOfRetriever(_ context.Context, o client.Object) []ctrl.Request {
	rt := o.(*v1alpha1.Retriever)
	return []ctrl.Request{{NamespacedName: client.ObjectKey{Namespace: rt.Namespace, Name: rt.Spec.CorpusRef.Name}}}
}
