package controllers

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/indexjob"
)

// applyConfiguration is what server-side apply takes.
type applyConfiguration = runtime.ApplyConfiguration

// planJob describes the revision for its Job: the compiled policy, the
// sources exactly as the operator read them, the embedder and vector
// store, and the quality gate. A Milvus collection is recorded in the
// inventory (and published) before any Job can create it.
func (r *CorpusReconciler) planJob(ctx context.Context, s *corpusState, names jobObjects) (*indexjob.Plan, error) {
	plan := &indexjob.Plan{
		Namespace: s.corpus.Namespace, Corpus: s.corpus.Name, Revision: s.revision,
		Policy: s.compiled.Spec, PolicyRevision: s.compiled.Revision,
		Sources: readSourcesOf(s), SourceDigest: s.sources.Digest(),
		Embedder: s.embedCfg, VectorStore: s.vectorStore, StatusConfigMap: names.status,
	}
	if s.corpus.UsesMilvus() {
		plan.MilvusShards = s.corpus.Spec.VectorStore.Milvus.Shards
		if err := r.recordCollection(s, s.vectorStore); err != nil {
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

// planGate is the Corpus's quality gate for the Job, nil without one.
func (r *CorpusReconciler) planGate(ctx context.Context, s *corpusState) (*indexjob.GatePlan, error) {
	g := s.corpus.QualityGate()
	if g == nil {
		return nil, nil
	}
	spec, err := gateSpec(g)
	if err != nil {
		return nil, stalled(err)
	}
	var cm corev1.ConfigMap
	key := orDefault(g.GoldenQueries.Key, "queries.jsonl")
	if err := r.Get(ctx, client.ObjectKey{Namespace: s.corpus.Namespace, Name: g.GoldenQueries.Name}, &cm); err != nil {
		return nil, fmt.Errorf("reading golden queries ConfigMap %s: %w", g.GoldenQueries.Name, err)
	}
	plan := &indexjob.GatePlan{Golden: cm.Data[key], MinHitRate: spec.MinHitRate, MaxDrop: spec.MaxDrop, MinQueries: spec.MinQueries,
		MaxParents: g.MaxParents, Digest: gateDigest(g, cm.Data[key], s.corpus.Status.ActiveRevision)}
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

// jobEnv gives an indexing Job the embedding API key and the Milvus
// credentials, from the Corpus's Secrets.
func jobEnv(c *v1alpha1.Corpus) ([]corev1.EnvVar, error) {
	var env []corev1.EnvVar
	secret := func(variable, name, key string, optional bool) corev1.EnvVar {
		return corev1.EnvVar{Name: variable, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: &optional}}}
	}
	if e := c.Spec.Embedding; e.IsOpenAI() && e.OpenAI.SecretRef != nil {
		env = append(env, secret(apiKeyEnv, e.OpenAI.SecretRef.Name, secretKey(e.OpenAI.SecretRef), false))
	}
	if c.UsesMilvus() && c.Spec.VectorStore.Milvus.SecretRef != nil {
		name := c.Spec.VectorStore.Milvus.SecretRef.Name
		env = append(env, secret("MILVUS_TOKEN", name, milvusTokenKey, true),
			secret("MILVUS_USERNAME", name, milvusUsernameKey, true), secret("MILVUS_PASSWORD", name, milvusPasswordKey, true))
	}
	return env, nil
}
