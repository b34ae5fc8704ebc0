package controllers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval/build"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/sourceset"
)

// apiKeyEnv is the variable query pods read an embedding API key from.
const apiKeyEnv = "OPENAI_API_KEY"

// resolvePolicy fetches and compiles the Corpus's ChunkingPolicy. A missing
// policy is waited for; one that cannot be compiled stalls the Corpus.
func (r *CorpusReconciler) resolvePolicy(ctx context.Context, s *corpusState) (ctrl.Result, error) {
	name := s.corpus.Spec.ChunkingPolicyRef.Name
	var p v1alpha1.ChunkingPolicy
	err := r.Get(ctx, client.ObjectKey{Name: name}, &p)
	if apierrors.IsNotFound(err) {
		s.reason, s.message = v1alpha1.ReasonPolicyNotFound, fmt.Sprintf("ChunkingPolicy %s not found", name)
		return ctrl.Result{RequeueAfter: waitInterval}, nil
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("reading ChunkingPolicy %s: %w", name, err)
	}
	if s.compiled, err = policy.Compile(&p.Spec); err != nil {
		return ctrl.Result{}, stalled(v1alpha1.ReasonPolicyInvalid, fmt.Errorf("ChunkingPolicy %s: %w", name, err))
	}
	return ctrl.Result{}, nil
}

// readSources reads every source; per-source problems go to status. With
// no document at all the Corpus is stalled until a source changes.
func (r *CorpusReconciler) readSources(ctx context.Context, s *corpusState) (ctrl.Result, error) {
	fetchers := &r.fetchers
	if s.corpus.GetIndexingMode() == v1alpha1.IndexingJob {
		// The Job reads the documents; the operator only needs to know
		// what they are.
		fetchers = &r.leanFetchers
	}
	if reconcileRequested(s.corpus) {
		fetchers.Forget(urlsOf(s.corpus)...)
	}
	reader := &sourceset.Reader{Client: r.Client, Namespace: s.corpus.Namespace, ConfigMaps: &r.sourceConfigMaps, Metadata: r.MetadataCache, Fetchers: fetchers, NoCrossNamespaceRefs: r.NoCrossNamespaceRefs}
	set, err := reader.Read(ctx, s.corpus.Spec.Sources)
	if err != nil {
		return ctrl.Result{}, err
	}
	s.sources = set
	s.corpus.Status.SourceErrors = slices.Clone(set.Errors) // a kept set is shared
	if b := set.Blocked; b != nil {
		return r.sourceBlocked(s, b)
	}
	if strict := set.FailedStrictly(s.corpus.Spec.Sources); len(strict) > 0 {
		return ctrl.Result{}, stalled(v1alpha1.ReasonSourceError, fmt.Errorf("source %s could not be read in full and its failurePolicy is Fail: no revision is built until it can (see status.sourceErrors)", strings.Join(strict, ", ")))
	}
	if set.Count() == 0 {
		return ctrl.Result{}, stalled(v1alpha1.ReasonNoDocuments, fmt.Errorf("the sources hold no document to index%s", sourceErrorsSummary(set.Errors)))
	}
	return ctrl.Result{}, nil
}

// sourceErrorsSummary says what went wrong reading the sources, for a
// message that otherwise says only that nothing was read: ": source docs:
// ConfigMap handbook not found (and 2 more problems, see
// status.sourceErrors)".
func sourceErrorsSummary(errs []v1alpha1.SourceError) string {
	if len(errs) == 0 {
		return ""
	}
	first := errs[0]
	msg := ": source " + first.Source
	if first.Document != "" {
		msg += ", document " + first.Document
	}
	msg += ": " + first.Message
	if more := len(errs) - 1; more > 0 {
		msg += fmt.Sprintf(" (and %d more %s, see status.sourceErrors)", more, plural(more, "problem", "problems"))
	}
	return msg
}

// resolveEmbedder builds the embedder and the configuration recorded in the
// revision. A missing API key Secret is waited for.
func (r *CorpusReconciler) resolveEmbedder(ctx context.Context, s *corpusState) (ctrl.Result, error) {
	cfg, err := embedderConfig(s.corpus.Spec.Embedding)
	if err != nil {
		return ctrl.Result{}, stalled(v1alpha1.ReasonEmbeddingError, err)
	}
	key := ""
	if spec := s.corpus.Spec.Embedding; spec.IsOpenAI() && spec.OpenAI.SecretRef != nil {
		var result ctrl.Result
		if key, result, err = r.apiKey(ctx, s, spec.OpenAI.SecretRef); err != nil || !result.IsZero() {
			return result, err
		}
	}
	e, err := build.NewEmbedderWithKey(cfg, key)
	if err != nil {
		return ctrl.Result{}, stalled(v1alpha1.ReasonEmbeddingError, err)
	}
	s.embedder, s.embedCfg = e, cfg
	return ctrl.Result{}, nil
}

// embedderConfig is the embedder a spec asks for, as a revision records
// it: BM25 alone for the builtin embedder; with an OpenAI-compatible model,
// the model and BM25 with the default parameters, since every store holds
// both vectors (BM25 for words, the model for meaning) and a Retriever's
// search mode says which its queries search.
func embedderConfig(spec *v1alpha1.Embedding) (bundle.Embedder, error) {
	if !spec.IsOpenAI() {
		k1, b, weight, err := spec.BuiltinParams()
		return bundle.Embedder{Kind: bundle.EmbedderLexical, K1: k1, B: b, ContextWeight: weight}, err
	}
	o := spec.OpenAI
	return bundle.Embedder{Kind: bundle.EmbedderHybrid, K1: v1alpha1.DefaultK1, B: v1alpha1.DefaultB,
		Endpoint: o.Endpoint, Model: o.Model, Dimensions: o.Dimensions, APIKeyEnv: apiKeyEnv}, nil
}

// apiKey reads the embedding API key from its Secret; a Secret that does
// not exist yet is waited for, one without the key stalls the Corpus.
func (r *CorpusReconciler) apiKey(ctx context.Context, s *corpusState, ref *v1alpha1.SecretKeyReference) (string, ctrl.Result, error) {
	var secret corev1.Secret
	err := r.Get(ctx, client.ObjectKey{Namespace: s.corpus.Namespace, Name: ref.Name}, &secret)
	if apierrors.IsNotFound(err) {
		s.reason, s.message = v1alpha1.ReasonEmbeddingError, fmt.Sprintf("Secret %s not found", ref.Name)
		return "", ctrl.Result{RequeueAfter: waitInterval}, nil
	}
	if err != nil {
		return "", ctrl.Result{}, fmt.Errorf("reading Secret %s: %w", ref.Name, err)
	}
	value, ok := secret.Data[secretKey(ref)]
	if !ok {
		return "", ctrl.Result{}, stalled(v1alpha1.ReasonEmbeddingError, fmt.Errorf("Secret %s has no key %q", ref.Name, secretKey(ref)))
	}
	return string(value), ctrl.Result{}, nil
}

// secretKey returns the key of a secret reference, "apiKey" when unset.
func secretKey(ref *v1alpha1.SecretKeyReference) string {
	if ref.Key == "" {
		return "apiKey"
	}
	return ref.Key
}

// computeRevision names the revision the spec and sources call for. With
// Postgres, the server and database the connection Secret leads to are
// part of it; a Secret that does not exist yet is waited for.
func (r *CorpusReconciler) computeRevision(ctx context.Context, s *corpusState) (ctrl.Result, error) {
	at := func(string) bundle.VectorStoreRef { return bundle.VectorStoreRef{} }
	if k := indexKindOf(s.corpus); k != nil {
		var err error
		at, err = k.locate(ctx, r, s.corpus, s.embedCfg.Dimensions)
		if apierrors.IsNotFound(err) {
			s.reason, s.message = v1alpha1.ReasonVectorStoreError, err.Error()
			return ctrl.Result{RequeueAfter: waitInterval}, nil
		}
		if err != nil {
			return ctrl.Result{}, stalled(v1alpha1.ReasonVectorStoreError, err)
		}
	} else if s.corpus.UsesSegments() {
		at = func(string) bundle.VectorStoreRef { return bundle.VectorStoreRef{Kind: bundle.VectorStoreSegments} }
	}
	parentStore := ""
	if s.corpus.UsesClaims() {
		// Moving to claims builds the index again, onto a claim.
		parentStore = bundle.ParentStoreClaim
	}
	s.revision = bundle.Revision(s.compiled.Revision, s.sources.Digest(), s.embedCfg, at(""), parentStore)
	s.vectorStore = at(s.revision)
	s.corpus.Status.LastAttemptedRevision = s.revision
	recordRevision(ctx, s.revision)
	return ctrl.Result{}, nil
}

// urlsOf lists the URLs of a Corpus's sources.
func urlsOf(c *v1alpha1.Corpus) []string {
	var out []string
	for _, src := range c.Spec.Sources {
		if src.URL != nil {
			out = append(out, src.URL.URL)
		}
	}
	return out
}
