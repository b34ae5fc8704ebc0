// Package policytest builds revision bundles and build requests for tests
// from ChunkingPolicy specs, compiled as the operator compiles them; the
// Kubernetes-free helpers are in bundletest.
package policytest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/policy"
	"github.com/parentrag/parentrag/internal/retrieval/build"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/bundle/bundletest"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
)

// SavePolicy is Save with docs split by the policy spec instead of
// Builder: the manifest records the compiled spec and its length unit.
func SavePolicy(tb testing.TB, docs []hierarchy.Document, spec v1alpha1.ChunkingPolicySpec, rev string) string {
	tb.Helper()
	compiled, err := policy.Compile(&spec)
	if err != nil {
		tb.Fatal(err)
	}
	lex, err := bm25.NewLexical(bm25.DefaultK1, bm25.DefaultB)
	if err != nil {
		tb.Fatal(err)
	}
	ix, err := indexer.Build(context.Background(), docs, compiled.Builder, lex, indexer.Options{Workers: 2})
	if err != nil {
		tb.Fatal(err)
	}
	m := bundletest.Manifest(docs, rev)
	m.Policy, _ = json.Marshal(compiled.Spec)
	m.LengthUnit = string(compiled.Spec.LengthUnit)
	dir := filepath.Join(tb.TempDir(), "bundle")
	bundletest.SaveIndex(tb, dir, ix, m)
	return dir
}

// LexicalRequest is a build of docs into dir with the default policy and
// the lexical embedder (its default context weight), the children kept as
// store says: what a test sets no more of.
func LexicalRequest(tb testing.TB, docs []hierarchy.Document, store bundle.VectorStoreRef, dir string) build.Request {
	tb.Helper()
	return PolicyRequest(tb, docs, &policy.Default().Spec, store, dir)
}

// PolicyRequest is LexicalRequest with the policy spec instead of the
// default one.
func PolicyRequest(tb testing.TB, docs []hierarchy.Document, spec *v1alpha1.ChunkingPolicySpec, store bundle.VectorStoreRef, dir string) build.Request {
	tb.Helper()
	compiled, err := policy.Compile(spec)
	if err != nil {
		tb.Fatal(err)
	}
	cfg := bundle.Embedder{Kind: bundle.EmbedderLexical, K1: bm25.DefaultK1, B: bm25.DefaultB, ContextWeight: indexer.DefaultContextWeight}
	e, err := build.NewEmbedder(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	digest := bundle.SourceDigest(docs)
	return build.Request{
		Docs: docs, Policy: compiled.Manifested(), Embedder: e, EmbedderConfig: cfg,
		Revision: bundle.Revision(compiled.Revision, digest, cfg, store, ""), SourceDigest: digest, VectorStore: store, Dir: dir,
	}
}

// LevelsPolicy cuts bundletest.Handbook into sections, parents of about a paragraph
// and children of about a sentence.
func LevelsPolicy() v1alpha1.ChunkingPolicySpec {
	return v1alpha1.ChunkingPolicySpec{
		Separators: &v1alpha1.Separators{Preset: v1alpha1.SeparatorsMarkdown},
		Levels:     []v1alpha1.Level{v1alpha1.LevelSection, v1alpha1.LevelParent, v1alpha1.LevelChild},
		Section:    &v1alpha1.ChunkSize{ChunkSize: 1000, MinChunkSize: 20},
		Parent:     &v1alpha1.ChunkSize{ChunkSize: 120}, Child: &v1alpha1.ChunkSize{ChunkSize: 60},
	}
}
