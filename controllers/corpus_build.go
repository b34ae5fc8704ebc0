package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/cmbundle"
	"github.com/parentrag/parentrag/internal/indexjob"
	"github.com/parentrag/parentrag/internal/retrieval/build"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/telemetry"
)

// ensureRevision makes sure the revision exists in ConfigMaps, building it
// when its manifest ConfigMap is missing. A revision whose manifest exists
// was stored whole (the manifest is created last), so a crashed build is
// simply built again; the ConfigMaps it had created are identical and
// reused. ConfigMaps of a stored revision deleted since are stored again
// (repairRevision).
func (r *CorpusReconciler) ensureRevision(ctx context.Context, s *corpusState) (ctrl.Result, error) {
	name := s.corpus.RevisionObjectName(s.revision)
	stored, err := r.manifests.get(ctx, r.MetadataCache, r.reader(), client.ObjectKey{Namespace: s.corpus.Namespace, Name: name})
	if err == nil {
		s.built = stored.status
		defer func() { s.built = stored.status }() // a repair stores no new manifest
		return r.repairRevision(ctx, s, stored)
	}
	if !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("reading revision %s: %w", name, err)
	}
	if s.corpus.GetIndexingMode() == v1alpha1.IndexingJob {
		return r.buildWithJob(ctx, s, name)
	}
	by, err := r.buildUnlessSuperseded(ctx, s, name)
	if by != "" {
		return r.discardSuperseded(ctx, s, by)
	}
	if err != nil {
		s.reason = v1alpha1.ReasonIndexFailed
		r.Recorder.Eventf(s.corpus, nil, corev1.EventTypeWarning, v1alpha1.ReasonIndexFailed, "Build", "revision %s failed: %s", s.revision, stalledMessage(err))
		return ctrl.Result{}, fmt.Errorf("building revision %s: %w", s.revision, err)
	}
	r.Recorder.Eventf(s.corpus, nil, corev1.EventTypeNormal, "RevisionBuilt", "Build",
		"built revision %s: %s", s.revision, revisionCounts(s.built))
	return ctrl.Result{}, nil
}

// build indexes the documents in process, writes the bundle to a temporary
// directory and stores it as the revision's ConfigMaps, shards first and
// the manifest last; opts add to how store packs it.
func (r *CorpusReconciler) build(ctx context.Context, s *corpusState, name string, opts ...cmbundle.PackOption) (err error) {
	log.FromContext(ctx).Info("building revision", "revision", s.revision, "documents", len(s.sources.Docs))
	s.progress.start(s.revision)
	defer s.progress.stop()
	embedder, cache, release, err := r.withCache(s.corpus, s.embedder)
	if err != nil {
		return err
	}
	defer release()
	started := metav1.Now()
	var built build.Built
	var stored *v1alpha1.ConfigMapsStatus
	defer func() {
		s.corpus.Status.LastBuild = inProcessBuild(s.revision, started, cache, built, err)
		s.corpus.Status.LastBuild.ConfigMaps = stored
	}()
	tmp, err := os.MkdirTemp("", "parentrag-build-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	req, err := r.buildRequest(ctx, s, embedder, filepath.Join(tmp, "bundle"))
	if err != nil {
		return err
	}
	if built, err = build.Run(ctx, req); err != nil {
		return err
	}
	logged := []any{"revision", s.revision, "documents", len(s.sources.Docs), "reusedFromUnitCache", built.Reused}
	if built.Runs != nil {
		logged = append(logged, "runsReused", built.Runs.Reused, "runsBuilt", built.Runs.Built)
	}
	log.FromContext(ctx).Info("built revision", logged...)
	sctx, span := telemetry.Start(ctx, telemetry.SpanStore)
	stored, err = r.store(sctx, s, req.Dir, name, opts...)
	telemetry.End(span, err)
	return err
}

// buildRequest describes the revision's build into dir; with Milvus or
// Postgres it records the revision's collection or table in the inventory
// first.
func (r *CorpusReconciler) buildRequest(ctx context.Context, s *corpusState, e embed.Embedder, dir string) (build.Request, error) {
	req := build.Request{
		Docs: s.sources.Docs, Policy: s.compiled.Manifested(), Embedder: e, EmbedderConfig: s.embedCfg,
		Revision: s.revision, SourceDigest: s.sources.Digest(), VectorStore: s.vectorStore,
		Workers: 2, OnProgress: s.progress.report, SaveProgress: indexer.Progress{Stage: StageSave}, Dir: dir,
		UnitCacheDir: r.unitCacheDir(s.corpus), UnitCacheMaxAge: build.DefaultUnitCacheMaxAge,
	}
	if k := indexKindOf(s.corpus); k != nil {
		if err := k.configure(ctx, r, s.corpus, s.vectorStore, &req); err != nil {
			return req, err
		}
		return req, r.recordIndex(s, k)
	}
	return req, nil
}

// unitCacheDir is where the Corpus's in-process builds keep their units
// (see build.Request.UnitCacheDir): inside its embedding cache directory,
// where its indexing Jobs keep them on the cache volume too.
func (r *CorpusReconciler) unitCacheDir(c *v1alpha1.Corpus) string {
	return filepath.Join(r.cacheDir(c), indexjob.UnitCacheSubdir)
}

// store creates the revision's ConfigMaps, owned by the Corpus, reads the
// revision back from its manifest, and counts the ConfigMaps it created
// and those already there. A segment's shards are named by what they hold
// (cmbundle.SharingSegments), so a segment an earlier revision holds is
// stored already: its shards are neither read nor sent again, and an edit
// stores the shards of the segments it changed. opts add to how it packs.
func (r *CorpusReconciler) store(ctx context.Context, s *corpusState, dir, name string, opts ...cmbundle.PackOption) (*v1alpha1.ConfigMapsStatus, error) {
	shared, err := sharedShards(ctx, r.reader(), s.corpus)
	if err != nil {
		return nil, err
	}
	opts = append([]cmbundle.PackOption{
		cmbundle.SharingSegments(s.corpus.SharedShardPrefix()),
		cmbundle.OmittingStored(func(n string) bool { return shared[n] }),
	}, opts...)
	packer, err := cmbundle.NewPacker(dir, s.corpus.Namespace, name, revisionLabels(s.corpus, s.revision, ""), opts...)
	if err != nil {
		return nil, err
	}
	stored := &v1alpha1.ConfigMapsStatus{Reused: packer.Omitted()}
	done := 0
	err = packer.Each(func(cm *corev1.ConfigMap) error {
		s.progress.report(indexer.Progress{Stage: StageStore, Done: done, Total: packer.Count()})
		done++
		if err := controllerutil.SetControllerReference(s.corpus, cm, r.Scheme()); err != nil {
			return err
		}
		switch err := r.Create(ctx, cm); {
		case err == nil:
			stored.Created++
		case apierrors.IsAlreadyExists(err):
			stored.Reused++
		default:
			return fmt.Errorf("creating ConfigMap %s: %w", cm.Name, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	log.FromContext(ctx).Info("stored revision", "revision", s.revision, "configMapsCreated", stored.Created, "configMapsReused", stored.Reused)
	manifest := packer.Manifest()
	s.built, _, err = revisionFromManifest(&manifest)
	return stored, err
}

// revisionFromManifest describes a stored revision from its manifest
// ConfigMap, and returns the ConfigMaps that manifest names: none for a
// revision on a claim.
func revisionFromManifest(cm *corev1.ConfigMap) (*v1alpha1.RevisionStatus, []string, error) {
	var m bundle.Manifest
	if err := json.Unmarshal([]byte(cm.Data[cmbundle.ManifestKey]), &m); err != nil {
		return nil, nil, fmt.Errorf("ConfigMap %s holds no valid manifest: %w", cm.Name, err)
	}
	rev := &v1alpha1.RevisionStatus{
		Name: m.Revision, PolicyRevision: m.PolicyRevision, SourceDigest: m.SourceDigest,
		Documents: m.Documents, Parents: m.Parents, Children: m.Children, Bytes: m.Bytes,
		ConfigMaps: 1, BuiltAt: metav1.NewTime(m.CreatedAt), Claim: cm.Data[claimKey],
	}
	if rev.Claim != "" {
		// Built by a Job, which verified it and measured the gate.
		var err error
		if rev.Verification, err = indexjob.DecodeOptional[v1alpha1.VerificationStatus](cm, verificationKey); err != nil {
			return nil, nil, err
		}
		rev.QualityGate, err = indexjob.DecodeOptional[v1alpha1.QualityGateStatus](cm, qualityGateKey)
		return rev, nil, err
	}
	names, err := cmbundle.Names(cm)
	if err != nil {
		return nil, nil, err
	}
	rev.ConfigMaps = len(names)
	return rev, names, nil
}

// inProcessBuild records a build that ran in the operator and, when it
// succeeded, what its unit cache saved.
func inProcessBuild(revision string, started metav1.Time, cache *embed.Cached, built build.Built, err error) *v1alpha1.BuildStatus {
	finished := metav1.Now()
	b := &v1alpha1.BuildStatus{Revision: revision, Mode: v1alpha1.IndexingInProcess, Result: "Succeeded",
		StartedAt: &started, FinishedAt: &finished, EmbeddingCache: indexjob.CacheStatus(cache), Logs: "the operator's log"}
	if err != nil {
		b.Result, b.Message = "Failed", stalledMessage(err)
		return b
	}
	b.UnitCache = indexjob.UnitStatus(built)
	return b
}
