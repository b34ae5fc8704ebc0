package build_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/milvus"
	"github.com/parentrag/parentrag/internal/milvustest"
	"github.com/parentrag/parentrag/internal/policy/policytest"
	"github.com/parentrag/parentrag/internal/retrieval/build"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/indexer"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// docs are three small documents about distinct subjects.
func docs() []hierarchy.Document {
	return []hierarchy.Document{
		{ID: "tea", Title: "Tea", Text: "Green tea is steamed or pan-fired soon after picking. Black tea is fully oxidised before drying."},
		{ID: "bikes", Title: "Bikes", Text: "A derailleur moves the chain between sprockets. Hub gears are sealed inside the rear wheel."},
		{ID: "bees", Title: "Bees", Text: "Honey bees dance to tell the hive where flowers are. Bumblebees buzz to shake pollen loose."},
	}
}

// request is a lexical build of docs into dir that records its progress
// stages in stages.
func request(t *testing.T, dir string, stages *[]string) build.Request {
	t.Helper()
	req := policytest.LexicalRequest(t, docs(), bundle.VectorStoreRef{}, dir)
	req.OnProgress = func(p indexer.Progress) {
		if n := len(*stages); n == 0 || (*stages)[n-1] != p.Stage {
			*stages = append(*stages, p.Stage)
		}
	}
	req.SaveProgress = indexer.Progress{Stage: "save"}
	return req
}

// TestRunSavesAnOpenableBundle checks that Run records the request in the
// manifest, reports the save stage after the indexer's, and writes a
// bundle that opens and answers a query.
func TestRunSavesAnOpenableBundle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bundle")
	var stages []string
	req := request(t, dir, &stages)
	built, err := build.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	m := built.Manifest
	if m.Revision != req.Revision || m.SourceDigest != req.SourceDigest || m.PolicyRevision != req.Policy.Revision || m.Embedder != req.EmbedderConfig {
		t.Errorf("manifest %+v does not record the request", m)
	}
	var spec map[string]any
	if err := json.Unmarshal(m.Policy, &spec); err != nil || m.LengthUnit == "" {
		t.Errorf("manifest policy %q (unit %q) is not the policy's spec: %v", m.Policy, m.LengthUnit, err)
	}
	if m.Documents != 3 || m.Children == 0 || m.CreatedAt.IsZero() || m.CreatedAt.After(time.Now()) {
		t.Errorf("manifest counts %d documents, %d children, created %s", m.Documents, m.Children, m.CreatedAt)
	}
	if got := strings.Join(stages, ","); !strings.HasSuffix(got, indexer.StageEmbed+",save") {
		t.Errorf("stages %s, want the indexer's and then save", got)
	}
	b, err := bundle.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	res, err := b.Retriever.Retrieve(context.Background(), "which bees dance", retrieve.Options{MaxParents: 1})
	if err != nil || len(res) == 0 || res[0].DocID != "bees" {
		t.Errorf("retrieving from the saved bundle: %+v, %v", res, err)
	}
}

// TestRunRefusesAnExistingBundleUnlessReplace checks that a second build
// into the same directory fails without Replace and succeeds with it.
func TestRunRefusesAnExistingBundleUnlessReplace(t *testing.T) {
	var stages []string
	req := request(t, filepath.Join(t.TempDir(), "bundle"), &stages)
	if _, err := build.Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if _, err := build.Run(context.Background(), req); err == nil {
		t.Error("a second build into the same directory succeeded without Replace")
	}
	req.Replace = true
	if _, err := build.Run(context.Background(), req); err != nil {
		t.Errorf("with Replace: %v", err)
	}
}

// TestRunFillsTheCollection checks that with a collection the children go
// to Milvus, whose rows match the manifest, and the bundle holds none.
func TestRunFillsTheCollection(t *testing.T) {
	srv := milvustest.Start(t)
	var stages []string
	req := request(t, filepath.Join(t.TempDir(), "bundle"), &stages)
	cfg := milvus.Config{Address: srv.Addr(), Collection: "children_build", Retry: milvus.Retry{Attempts: 2, Backoff: time.Millisecond, MaxBackoff: time.Millisecond}}
	req.Collection = &cfg
	req.VectorStore = bundle.VectorStoreRef{Kind: bundle.VectorStoreMilvus, Address: cfg.Address, Collection: cfg.Collection}
	built, err := build.Run(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	m := built.Manifest
	store, err := milvus.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close(context.Background())
	if n, err := store.Count(context.Background()); err != nil || n != m.Children {
		t.Errorf("collection holds %d rows (%v), manifest %d children", n, err, m.Children)
	}
	if m.VectorStore.Collection != cfg.Collection {
		t.Errorf("manifest records vector store %+v", m.VectorStore)
	}
}

// TestOpenCollectionNamesTheAddress checks that an unreachable Milvus is
// reported with its address.
func TestOpenCollectionNamesTheAddress(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cfg := milvus.Config{Address: "127.0.0.1:1", Collection: "c", Retry: milvus.Retry{Attempts: 1, Backoff: time.Millisecond, MaxBackoff: time.Millisecond}}
	_, err := build.OpenCollection(ctx, cfg)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("milvus at %s", cfg.Address)) {
		t.Errorf("got %v, want an error naming the address", err)
	}
}

// TestNewCachedEmbedderWithoutDir checks that no cache directory means no
// cache, and that a bad configuration is refused.
func TestNewCachedEmbedderWithoutDir(t *testing.T) {
	cfg := bundle.Embedder{Kind: bundle.EmbedderLexical, K1: bm25.DefaultK1, B: bm25.DefaultB}
	_, cache, release, err := build.NewCachedEmbedder(cfg, "")
	if err != nil || cache != nil {
		t.Fatalf("without a directory: cache %v, %v", cache, err)
	}
	release()
	if _, err := build.NewEmbedder(bundle.Embedder{Kind: bundle.EmbedderLexical, K1: -1}); err == nil {
		t.Error("a negative k1 was accepted")
	}
}
