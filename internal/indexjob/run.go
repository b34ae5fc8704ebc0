package indexjob

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval/build"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/rollout"
	"github.com/parentrag/parentrag/internal/sourceset"
	"github.com/parentrag/parentrag/internal/telemetry"
)

// BundleDir is where, inside the revision's volume, the bundle is written;
// the volume's root cannot be replaced atomically, a directory in it can.
const BundleDir = "bundle"

// Runner builds the revision a plan describes.
type Runner struct {
	// Client reads the plan, the sources and writes the status.
	Client client.Client
	// Namespace of the plan.
	Namespace string
	// Volume is the revision's volume; the bundle goes to Volume/bundle.
	Volume string
	// ActiveVolume holds the active revision, for the quality gate; ""
	// when there is none.
	ActiveVolume string
	// EmbeddingCacheDir keeps the Corpus's embedding cache; "" for none.
	EmbeddingCacheDir string
	// UnitCacheDir keeps the Corpus's unit cache (see build.Request);
	// when "", the units directory inside EmbeddingCacheDir, if any.
	UnitCacheDir string
	// OnProgress, when set, also receives every progress report.
	OnProgress func(indexer.Progress)
}

// Run builds, verifies and, when asked, measures the revision of the plan
// in ConfigMap planName, and reports the result or the failure in the
// plan's status ConfigMap. It returns the failure too, so that the Job
// fails and Kubernetes retries it as its backoffLimit says. While tracing
// is on, the run is a span of ctx's (the operator's, that created the
// Job), with the build's stages below it.
func (r *Runner) Run(ctx context.Context, planName string) (err error) {
	ctx, span := telemetry.Start(ctx, telemetry.SpanIndexJob)
	if span.IsRecording() {
		span.SetAttributes(attribute.String("k8s.namespace.name", r.Namespace), attribute.String("parentrag.plan", planName))
	}
	defer func() { telemetry.End(span, err) }()
	plan, err := r.readPlan(ctx, planName)
	if err != nil {
		return err
	}
	rep := &reporter{client: r.Client, key: client.ObjectKey{Namespace: r.Namespace, Name: plan.StatusConfigMap}, also: r.OnProgress}
	res, err := r.build(ctx, plan, rep)
	if err != nil {
		var fail *Failure
		if !errors.As(err, &fail) {
			fail = &Failure{Message: err.Error()}
		}
		if werr := rep.write(ctx, FailureKey, Encode(fail)); werr != nil {
			return errors.Join(err, werr)
		}
		return err
	}
	return rep.write(ctx, ResultKey, Encode(res))
}

// Error makes a Failure an error.
func (f *Failure) Error() string {
	if f.Document != "" {
		return fmt.Sprintf("document %s: %s", f.Document, f.Message)
	}
	return f.Message
}

// readPlan reads and decodes the plan ConfigMap.
func (r *Runner) readPlan(ctx context.Context, name string) (*Plan, error) {
	var cm corev1.ConfigMap
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: r.Namespace, Name: name}, &cm); err != nil {
		return nil, fmt.Errorf("reading the plan ConfigMap %s: %w", name, err)
	}
	return ReadPlan(&cm)
}

// build runs the steps of a build and returns its result.
func (r *Runner) build(ctx context.Context, plan *Plan, rep *reporter) (*Result, error) {
	compiled, err := policy.Compile(&plan.Policy)
	if err != nil {
		return nil, fmt.Errorf("the plan's policy: %w", err)
	}
	if compiled.Revision != plan.PolicyRevision {
		return nil, fmt.Errorf("the policy compiles to revision %s here, %s in the operator: the image differs from the operator's", compiled.Revision, plan.PolicyRevision)
	}
	set, err := r.readSources(ctx, plan)
	if err != nil {
		return nil, err
	}
	e, cache, release, err := build.NewCachedEmbedder(plan.Embedder, r.EmbeddingCacheDir)
	if err != nil {
		return nil, err
	}
	defer release()
	built, err := r.index(ctx, plan, compiled, set, e, rep)
	if err != nil {
		return nil, err
	}
	releaseDocuments(set)
	res := &Result{Manifest: built.Manifest, SourceErrors: set.Errors, SourceErrorCount: set.ErrorCount}
	res.EmbeddingCache = CacheStatus(cache)
	if r.unitCacheDir() != "" {
		res.UnitCache = UnitStatus(built)
	}
	if err := r.check(ctx, plan, res); err != nil {
		return nil, err
	}
	return res, nil
}

// releaseDocuments drops the documents once the bundle is written and
// returns their memory to the system, so that the checks, which map the
// bundle's child index, do not stack its pages on the text's.
func releaseDocuments(set *sourceset.Set) {
	set.Docs = nil
	debug.FreeOSMemory()
}

// readSources reads exactly the sources the operator read and refuses to
// build when they changed since.
func (r *Runner) readSources(ctx context.Context, plan *Plan) (*sourceset.Set, error) {
	reader := &sourceset.Reader{Client: r.Client, Namespace: r.Namespace}
	set, err := reader.Read(ctx, plan.Sources)
	if err != nil {
		return nil, err
	}
	if strict := set.FailedStrictly(plan.Sources); len(strict) > 0 {
		first := set.Errors[0]
		return nil, &Failure{Document: first.Document, Message: fmt.Sprintf("source %s could not be read in full and its failurePolicy is Fail: %s", strings.Join(strict, ", "), first.Message)}
	}
	if got := set.Digest(); got != plan.SourceDigest {
		return nil, fmt.Errorf("the sources changed since revision %s was planned (digest %s, planned %s); the operator plans a new revision", plan.Revision, got, plan.SourceDigest)
	}
	return set, nil
}

// index builds the bundle into the volume and returns what it built.
func (r *Runner) index(ctx context.Context, plan *Plan, compiled *policy.Compiled, set *sourceset.Set, e embed.Embedder, rep *reporter) (build.Built, error) {
	req := build.Request{
		Docs: set.Docs, Policy: compiled.Manifested(), Embedder: e, EmbedderConfig: plan.Embedder,
		Revision: plan.Revision, SourceDigest: plan.SourceDigest, VectorStore: plan.VectorStore,
		OnProgress: func(p indexer.Progress) { rep.progress(ctx, p) },
		OnUnitsNotStored: func(n int, first error) {
			log.FromContext(ctx).Info("some units could not be written to the unit cache; the next build makes them again", "units", n, "error", first.Error())
		},
		SaveProgress: indexer.Progress{Stage: "store", Done: 0, Total: 1},
		Dir:          filepath.Join(r.Volume, BundleDir), Replace: true,
		UnitCacheDir: r.unitCacheDir(), UnitCacheMaxAge: build.DefaultUnitCacheMaxAge,
	}
	switch plan.VectorStore.Kind {
	case bundle.VectorStoreMilvus:
		cfg := bundle.MilvusConfig(plan.VectorStore)
		cfg.Shards = plan.MilvusShards
		req.Collection = &cfg
	case bundle.VectorStorePostgres:
		cfg := bundle.PostgresConfig(plan.VectorStore)
		req.Postgres = &cfg
	}
	return build.Run(ctx, req)
}

// unitCacheDir is where the Job keeps units: UnitCacheDir, or beside the
// embedding cache on its volume, or nowhere.
func (r *Runner) unitCacheDir() string {
	if r.UnitCacheDir != "" || r.EmbeddingCacheDir == "" {
		return r.UnitCacheDir
	}
	return filepath.Join(r.EmbeddingCacheDir, UnitCacheSubdir)
}

// UnitCacheSubdir is the directory of the unit cache inside an embedding
// cache directory.
const UnitCacheSubdir = "units"

// check verifies the saved bundle as query pods will open it and measures
// the quality gate against the active revision when the plan has one.
func (r *Runner) check(ctx context.Context, plan *Plan, res *Result) error {
	dir := filepath.Join(r.Volume, BundleDir)
	vctx, span := telemetry.Start(ctx, telemetry.SpanVerify)
	b, err := bundle.OpenContext(vctx, dir)
	if err == nil {
		defer b.Close()
	}
	res.Verification, err = Verify(vctx, dir, b, err)
	EndVerify(span, res.Verification, err)
	if err != nil {
		return err
	}
	if plan.Gate == nil || res.Verification.Result != v1alpha1.CheckPassed {
		return nil
	}
	ctx, span = telemetry.Start(ctx, telemetry.SpanGate)
	err = r.gate(ctx, plan.Gate, b, res)
	EndGate(span, res.QualityGate, err)
	return err
}

// gate measures the golden queries on the new bundle and the active one.
func (r *Runner) gate(ctx context.Context, g *GatePlan, candidate *bundle.Bundle, res *Result) error {
	golden, err := rollout.ParseGolden([]byte(g.Golden))
	if err != nil {
		return fmt.Errorf("golden queries: %w", err)
	}
	spec := rollout.GateSpec{MinHitRate: g.MinHitRate, MaxDrop: g.MaxDrop, MinQueries: g.MinQueries}
	spec.Options.MaxParents = g.MaxParents
	var activeName string
	var active *bundle.Bundle
	if g.ActiveRevision != "" && r.ActiveVolume != "" {
		if active, err = bundle.OpenContext(ctx, filepath.Join(r.ActiveVolume, BundleDir)); err != nil {
			return fmt.Errorf("opening the active revision %s: %w", g.ActiveRevision, err)
		}
		defer active.Close()
		activeName = g.ActiveRevision
	}
	var activeRetriever *retrieve.Retriever
	if active != nil {
		activeRetriever = active.Retriever
	}
	res.QualityGate, err = MeasureGate(ctx, golden, spec, candidate.Retriever, activeRetriever, activeName, g.Digest)
	return err
}
