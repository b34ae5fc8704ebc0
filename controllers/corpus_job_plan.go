package controllers

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/indexjob"
)

// applyConfiguration is what server-side apply takes.
type applyConfiguration = runtime.ApplyConfiguration

// planJob describes the revision for its Job: the compiled policy, the
// sources exactly as the operator read them, the embedder and vector
// store, and the quality gate. A Milvus collection or Postgres table is
// recorded in the inventory (and published) before any Job can create it.
func (r *CorpusReconciler) planJob(ctx context.Context, s *corpusState, names jobObjects) (*indexjob.Plan, error) {
	plan := &indexjob.Plan{
		Namespace: s.corpus.Namespace, Corpus: s.corpus.Name, Revision: s.revision,
		Policy: s.compiled.Spec, PolicyRevision: s.compiled.Revision,
		Sources: readSourcesOf(s), SourceDigest: s.sources.Digest(),
		Embedder: s.embedCfg, VectorStore: s.vectorStore, StatusConfigMap: names.status,
	}
	if s.corpus.UsesMilvus() {
		plan.MilvusShards = s.corpus.Spec.VectorStore.Milvus.Shards
	}
	if k := indexKindOf(s.corpus); k != nil {
		if err := r.recordIndex(s, k); err != nil {
			return nil, err
		}
	}
	gate, err := r.planGate(ctx, s)
	if err != nil {
		return nil, err
	}
	plan.Gate = gate
	return plan, nil
}

// readSourcesOf lists the sources as they were read: inline ones as they
// are, and one configMap source per ConfigMap read, with the keys that
// became documents, in the order they were read.
func readSourcesOf(s *corpusState) []v1alpha1.Source {
	var out []v1alpha1.Source
	for _, src := range s.corpus.Spec.Sources {
		if len(src.Inline) > 0 || src.URL != nil {
			out = append(out, src)
			continue
		}
		for _, read := range s.sources.Read {
			if read.Source == src.Name {
				out = append(out, v1alpha1.Source{Name: src.Name, FailurePolicy: src.FailurePolicy,
					ConfigMap: &v1alpha1.ConfigMapSource{Name: read.Name, Keys: read.Keys}})
			}
		}
	}
	return out
}

// planGate is the Corpus's quality gate for the Job, nil without one: the
// golden queries as readGolden checked them, and the thresholds.
func (r *CorpusReconciler) planGate(ctx context.Context, s *corpusState) (*indexjob.GatePlan, error) {
	g := s.corpus.QualityGate()
	if g == nil {
		return nil, nil
	}
	spec, err := gateSpec(g)
	if err != nil {
		return nil, err
	}
	golden, digest, result, err := r.readGolden(ctx, s)
	if err != nil {
		return nil, err
	}
	if !result.IsZero() {
		return nil, fmt.Errorf("%s", s.message)
	}
	var lines strings.Builder
	for _, q := range golden {
		lines.WriteString(indexjob.Encode(q) + "\n")
	}
	plan := &indexjob.GatePlan{Golden: lines.String(), MinHitRate: spec.MinHitRate, MaxDrop: spec.MaxDrop, MinQueries: spec.MinQueries,
		MaxParents: g.MaxParents, Digest: digest}
	if a := s.corpus.Status.ActiveRevision; a != nil && a.Claim != "" {
		plan.ActiveRevision = a.Name
	}
	return plan, nil
}

// activeClaim is the claim of the active revision when the gate compares
// against it.
func (r *CorpusReconciler) activeClaim(_ context.Context, c *v1alpha1.Corpus, gate *indexjob.GatePlan) string {
	if gate == nil || gate.ActiveRevision == "" || c.Status.ActiveRevision == nil {
		return ""
	}
	return c.Status.ActiveRevision.Claim
}

// indexImage runs indexing Jobs: the Corpus's choice, else the operator's.
func (r *CorpusReconciler) indexImage(c *v1alpha1.Corpus) string {
	if c.Spec.Indexing != nil && c.Spec.Indexing.Image != "" {
		return c.Spec.Indexing.Image
	}
	return r.Image
}
