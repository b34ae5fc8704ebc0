package controllers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/cmbundle"
	"github.com/parentrag/parentrag/internal/index/milvus"
	"github.com/parentrag/parentrag/internal/index/postgres"
	"github.com/parentrag/parentrag/internal/indexjob"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/rollout"
	"github.com/parentrag/parentrag/internal/telemetry"
)

// checkRevision verifies a built revision that is about to replace the
// active one and, when the Corpus has a quality gate, measures it against
// the active revision on the golden queries. The results go on the built
// revision for promote to decide on; they are reused while the revision,
// the gate settings and the golden queries stay the same, and measured
// again on a reconcile request.
func (r *CorpusReconciler) checkRevision(ctx context.Context, s *corpusState) (ctrl.Result, error) {
	c := s.corpus
	if !needsChecks(c, s.built.Name) {
		return ctrl.Result{}, nil
	}
	golden, digest, result, err := r.readGolden(ctx, s)
	if err != nil || !result.IsZero() {
		return result, err
	}
	if s.built.Claim != "" {
		// Its Job verified it and measured the gate where the volume is.
		return ctrl.Result{}, nil
	}
	reuseChecks(c, s.built, digest)
	if s.built.Verification != nil && (golden == nil || s.built.QualityGate != nil) {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{}, r.runChecks(ctx, s, golden, digest)
}

// needsChecks reports whether the built revision must pass the checks
// before promote may activate it: it is not active already and no pin
// holds it back.
func needsChecks(c *v1alpha1.Corpus, built string) bool {
	if a := c.Status.ActiveRevision; a != nil && a.Name == built {
		return false
	}
	pinned := c.PinnedRevision()
	return pinned == "" || pinned == built
}

// reuseChecks copies the results recorded for the same candidate, unless a
// reconcile request asks to measure again. A candidate that waited for
// the promote annotation is verified again when the annotation names it,
// since its stores may have changed while it waited. A gate result is
// reused only while its digest matches.
func reuseChecks(c *v1alpha1.Corpus, built *v1alpha1.RevisionStatus, digest string) {
	prev := c.Status.Candidate
	if prev == nil || prev.Name != built.Name || reconcileRequested(c) {
		return
	}
	waited := prev.Outcome == v1alpha1.OutcomeAwaitingPromotion || prev.Outcome == v1alpha1.OutcomePaused
	if !waited || c.Annotations[v1alpha1.PromoteAnnotation] != built.Name {
		built.Verification = prev.Verification
	}
	if prev.QualityGate != nil && prev.QualityGate.Digest == digest {
		built.QualityGate = prev.QualityGate
	}
}

// reconcileRequested reports whether the reconcile annotation holds a
// value not handled yet.
func reconcileRequested(c *v1alpha1.Corpus) bool {
	v, ok := c.Annotations[ReconcileAtAnno]
	return ok && v != c.Status.LastHandledReconcileAt
}

// runChecks opens the built revision from what the API server stores,
// verifies it, and runs the quality gate when golden queries are set.
// Failures of the checks are recorded on the revision; an error is
// returned only when the checks could not run (and are retried).
func (r *CorpusReconciler) runChecks(ctx context.Context, s *corpusState, golden []rollout.GoldenQuery, digest string) error {
	tmp, err := os.MkdirTemp("", "parentrag-check-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "candidate")
	vctx, span := telemetry.Start(ctx, telemetry.SpanVerify)
	candidate, err := r.openRevision(vctx, s.corpus, s.built.Name, dir)
	if err == nil {
		defer candidate.Close()
	}
	if s.built.Verification == nil || err != nil {
		if s.built.Verification, err = indexjob.Verify(vctx, dir, candidate, err); err != nil {
			indexjob.EndVerify(span, nil, err)
			s.reason = v1alpha1.ReasonVerificationFailed
			return fmt.Errorf("verifying revision %s (retried): %w", s.built.Name, err)
		}
		log.FromContext(ctx).Info("verified revision", "revision", s.built.Name, "result", s.built.Verification.Result, "message", s.built.Verification.Message)
	}
	indexjob.EndVerify(span, s.built.Verification, nil)
	if golden == nil || s.built.Verification.Result != v1alpha1.CheckPassed {
		return nil
	}
	gctx, span := telemetry.Start(ctx, telemetry.SpanGate)
	err = r.runGate(gctx, s, candidate, golden, digest, filepath.Join(tmp, "active"))
	indexjob.EndGate(span, s.built.QualityGate, err)
	return err
}

// runGate measures the golden queries on the candidate and on the active
// revision in the same run.
func (r *CorpusReconciler) runGate(ctx context.Context, s *corpusState, candidate *bundle.Bundle, golden []rollout.GoldenQuery, digest, activeDir string) error {
	spec, err := gateSpec(s.corpus.QualityGate())
	if err != nil {
		return err
	}
	var active *retrieve.Retriever
	activeName := ""
	if a := s.corpus.Status.ActiveRevision; a != nil && a.Claim == "" {
		// A revision on a claim cannot be opened here; without it the drop
		// is not measured.
		b, err := r.openRevision(ctx, s.corpus, a.Name, activeDir)
		if err != nil {
			return fmt.Errorf("opening the active revision %s for the quality gate: %w", a.Name, err)
		}
		defer b.Close()
		active, activeName = b.Retriever, a.Name
	}
	gate, err := indexjob.MeasureGate(ctx, golden, spec, candidate.Retriever, active, activeName, digest)
	if err != nil {
		return fmt.Errorf("running the quality gate: %w", err)
	}
	s.built.QualityGate = gate
	log.FromContext(ctx).Info("quality gate", "revision", s.built.Name, "result", gate.Result, "message", gate.Message)
	return nil
}

// openRevision unpacks a revision from its ConfigMaps, read from the API
// server rather than the cache, and opens it with the Corpus's Milvus
// credentials or Postgres connection.
func (r *CorpusReconciler) openRevision(ctx context.Context, c *v1alpha1.Corpus, revision, dir string) (*bundle.Bundle, error) {
	if _, err := cmbundle.Unpack(ctx, r.reader(), c.Namespace, c.RevisionObjectName(revision), dir); err != nil {
		return nil, err
	}
	return bundle.OpenWith(ctx, dir, bundle.OpenOptions{
		MilvusConfig: func(ref bundle.VectorStoreRef) (milvus.Config, error) { return r.milvusConfig(ctx, c, ref) },
		PostgresConfig: func(ref bundle.VectorStoreRef) (postgres.Config, error) {
			if !c.UsesPostgres() {
				return postgres.Config{}, fmt.Errorf("revision %s is in Postgres, but the Corpus no longer names its connection Secret", revision)
			}
			conn, err := r.postgresConnection(ctx, c)
			return postgresConfig(conn, ref), err
		},
	})
}

// readGolden reads and parses the quality gate's golden queries, nil when
// the Corpus has no gate, and digests them with the gate's settings and
// the active revision they are compared with. A missing ConfigMap or key
// is waited for; unparsable queries stall the Corpus.
func (r *CorpusReconciler) readGolden(ctx context.Context, s *corpusState) ([]rollout.GoldenQuery, string, ctrl.Result, error) {
	gate := s.corpus.QualityGate()
	if gate == nil {
		return nil, "", ctrl.Result{}, nil
	}
	text, result, err := r.goldenText(ctx, s, gate)
	if err != nil || !result.IsZero() {
		return nil, "", result, err
	}
	golden, err := rollout.ParseGolden([]byte(text))
	if err != nil {
		return nil, "", ctrl.Result{}, stalled(v1alpha1.ReasonGoldenQueriesInvalid, fmt.Errorf("golden queries in ConfigMap %s: %w", gate.GoldenQueries.Name, err))
	}
	return golden, gateDigest(gate, text, s.corpus.Status.ActiveRevision), ctrl.Result{}, nil
}

// goldenText reads the golden queries of a gate as its ConfigMap key
// holds them. A missing ConfigMap or key is waited for.
func (r *CorpusReconciler) goldenText(ctx context.Context, s *corpusState, gate *v1alpha1.QualityGate) (string, ctrl.Result, error) {
	ref := gate.GoldenQueries
	key := orDefault(ref.Key, "queries.jsonl")
	var cm corev1.ConfigMap
	err := r.Get(ctx, client.ObjectKey{Namespace: s.corpus.Namespace, Name: ref.Name}, &cm)
	if apierrors.IsNotFound(err) || (err == nil && cm.Data[key] == "") {
		s.reason, s.message = v1alpha1.ReasonGoldenQueriesNotFound, fmt.Sprintf("the quality gate's golden queries: ConfigMap %s has no key %q", ref.Name, key)
		return "", ctrl.Result{RequeueAfter: waitInterval}, nil
	}
	if err != nil {
		return "", ctrl.Result{}, fmt.Errorf("reading golden queries ConfigMap %s: %w", ref.Name, err)
	}
	return cm.Data[key], ctrl.Result{}, nil
}

// gateDigest identifies what a gate result measured: the settings, the
// golden queries and the revision compared against.
func gateDigest(gate *v1alpha1.QualityGate, golden string, active *v1alpha1.RevisionStatus) string {
	h := sha256.New()
	settings, _ := json.Marshal(gate)
	h.Write(settings)
	h.Write([]byte{0})
	h.Write([]byte(golden))
	if active != nil {
		h.Write([]byte{0})
		h.Write([]byte(active.Name))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// gateSpec turns the API's quality gate into the thresholds of the check.
func gateSpec(g *v1alpha1.QualityGate) (rollout.GateSpec, error) {
	spec := rollout.GateSpec{MaxDrop: -1, MinQueries: g.MinQueries, Options: retrieve.Options{MaxParents: g.MaxParents}}
	var err error
	if spec.MinHitRate, err = parseRate("minHitRate", g.MinHitRate); err != nil {
		return spec, stalled(v1alpha1.ReasonGoldenQueriesInvalid, err)
	}
	if g.MaxDrop != "" {
		if spec.MaxDrop, err = parseRate("maxDrop", g.MaxDrop); err != nil {
			return spec, stalled(v1alpha1.ReasonGoldenQueriesInvalid, err)
		}
	}
	return spec, nil
}

// parseRate parses a decimal between 0 and 1, 0 when empty.
func parseRate(field, v string) (float64, error) {
	if v == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f > 1 {
		return 0, fmt.Errorf("rollout.qualityGate.%s %q is not a decimal between 0 and 1", field, v)
	}
	return f, nil
}
