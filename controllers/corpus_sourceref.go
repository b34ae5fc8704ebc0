package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/source/artifact"
	"github.com/parentrag/parentrag/internal/sourceset"
)

// +kubebuilder:rbac:groups=source.toolkit.fluxcd.io,resources=gitrepositories;ocirepositories;buckets;externalartifacts,verbs=get;list;watch

// sourceRefIndex indexes Corpora by the Flux source objects they read, as
// "<Kind>/<namespace>/<name>".
const sourceRefIndex = "spec.sources.sourceRef"

// sourceKinds are the Flux kinds a sourceRef may name.
var sourceKinds = []v1alpha1.SourceRefKind{v1alpha1.SourceRefGitRepository, v1alpha1.SourceRefOCIRepository, v1alpha1.SourceRefBucket, v1alpha1.SourceRefExternalArtifact}

// sourceBackstop is how long a Corpus waiting for a watched source object
// waits before looking again; the watch normally wakes it first.
const sourceBackstop = 10 * time.Minute

// sourceBlocked makes the Corpus wait for, or stall on, a sourceRef source
// that cannot be read yet, with the reason and message the reader gave. A
// wait on a kind the controller watches ends when the object changes; on
// one it does not watch (installed after the operator started), the Corpus
// looks again every waitInterval.
func (r *CorpusReconciler) sourceBlocked(s *corpusState, b *sourceset.Blocked) (ctrl.Result, error) {
	if b.Stalled {
		return ctrl.Result{}, stalled(b.Reason, errors.New(b.Message))
	}
	s.reason, s.message = b.Reason, b.Message
	for _, src := range s.corpus.Spec.Sources {
		if src.SourceRef != nil && !r.watchedSourceKinds[src.SourceRef.Kind] {
			return ctrl.Result{RequeueAfter: waitInterval}, nil
		}
	}
	return ctrl.Result{RequeueAfter: sourceBackstop}, nil
}

// setSourceRevision records, once the Corpus is Ready on the revision its
// sources call for, the revision of the Flux artifacts they were read
// from; a commit that changed no file read moves it too.
func setSourceRevision(s *corpusState) {
	c := s.corpus
	if s.sources == nil || c.Status.ActiveRevision == nil || c.Status.ActiveRevision.Name != s.revision {
		return
	}
	c.Status.SourceRevision = s.sources.SourceRevision()
}

// watchSources watches the Flux source kinds installed in the cluster, so
// that a new artifact re-indexes the Corpora that read it; a kind that is
// not installed is skipped, and the operator runs without Flux.
func (r *CorpusReconciler) watchSources(mgr ctrl.Manager, b *builder.TypedBuilder[ctrl.Request]) error {
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &v1alpha1.Corpus{}, sourceRefIndex, sourceRefKeys); err != nil {
		return fmt.Errorf("indexing Corpora by sourceRef: %w", err)
	}
	r.watchedSourceKinds = map[v1alpha1.SourceRefKind]bool{}
	for _, kind := range sourceKinds {
		gvk := artifact.GroupVersion.WithKind(string(kind))
		if _, err := mgr.GetRESTMapper().RESTMapping(schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind}, gvk.Version); meta.IsNoMatchError(err) {
			continue
		} else if err != nil {
			return fmt.Errorf("looking up %s: %w", gvk, err)
		}
		obj := &unstructured.Unstructured{}
		obj.SetGroupVersionKind(gvk)
		b.Watches(obj, handler.EnqueueRequestsFromMapFunc(r.corporaOfSource), builder.WithPredicates(artifactChanged()))
		r.watchedSourceKinds[kind] = true
	}
	return nil
}

// sourceRefKeys lists the source objects a Corpus reads, for the index.
func sourceRefKeys(o client.Object) []string {
	c := o.(*v1alpha1.Corpus)
	var keys []string
	for _, src := range c.Spec.Sources {
		if ref := src.SourceRef; ref != nil {
			ns := ref.Namespace
			if ns == "" {
				ns = c.Namespace
			}
			keys = append(keys, sourceRefKey(string(ref.Kind), ns, ref.Name))
		}
	}
	return keys
}

// sourceRefKey is the index key of a source object.
func sourceRefKey(kind, namespace, name string) string {
	return kind + "/" + namespace + "/" + name
}

// corporaOfSource maps a Flux source object to the Corpora, in every
// namespace, that read it.
func (r *CorpusReconciler) corporaOfSource(ctx context.Context, o client.Object) []ctrl.Request {
	var list v1alpha1.CorpusList
	key := sourceRefKey(o.GetObjectKind().GroupVersionKind().Kind, o.GetNamespace(), o.GetName())
	if err := r.List(ctx, &list, client.MatchingFields{sourceRefIndex: key}); err != nil {
		return nil
	}
	return requestsFor(list.Items, func(*v1alpha1.Corpus) bool { return true })
}

// artifactChanged passes a source object's creation and deletion, and an
// update only when its artifact changed (another digest or revision, or
// one appearing): Flux updates a source's status at every interval.
func artifactChanged() predicate.Funcs {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		return artifactIdentity(e.ObjectOld) != artifactIdentity(e.ObjectNew)
	}}
}

// artifactIdentity is a source object's artifact digest and revision, or
// "" without one.
func artifactIdentity(o client.Object) string {
	u, ok := o.(*unstructured.Unstructured)
	if !ok {
		return ""
	}
	a, err := artifact.Of(u)
	if err != nil {
		return ""
	}
	return a.Digest + " " + a.Revision
}
