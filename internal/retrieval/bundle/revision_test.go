package bundle

import (
	"regexp"
	"slices"
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

var hex16 = regexp.MustCompile(`^[0-9a-f]{16}$`)

func digestDocs() []hierarchy.Document {
	return []hierarchy.Document{
		{ID: "a", Title: "A", Text: "alpha", Metadata: map[string]string{"k": "v", "z": "w"}},
		{ID: "b", Text: "bravo"},
		{ID: "c", Title: "C", Text: "charlie 🎉"},
	}
}

// permutations returns every ordering of docs.
func permutations(docs []hierarchy.Document) [][]hierarchy.Document {
	if len(docs) <= 1 {
		return [][]hierarchy.Document{slices.Clone(docs)}
	}
	var out [][]hierarchy.Document
	for i := range docs {
		rest := append(slices.Clone(docs[:i]), docs[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]hierarchy.Document{docs[i]}, p...))
		}
	}
	return out
}

func TestSourceDigestOrderIndependent(t *testing.T) {
	tests := []struct {
		name string
		docs []hierarchy.Document
	}{
		{"distinct ids", digestDocs()},
		// Two documents may share an id (two JSON Lines files); their
		// order must not matter either.
		{"shared id", append(digestDocs(), hierarchy.Document{ID: "a", Text: "another alpha"})},
		{"shared id, same text, other title", append(digestDocs(), hierarchy.Document{ID: "a", Title: "A2", Text: "alpha"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := SourceDigest(tt.docs)
			if !hex16.MatchString(want) {
				t.Fatalf("digest %q is not 16 hex digits", want)
			}
			for _, p := range permutations(tt.docs) {
				if got := SourceDigest(p); got != want {
					t.Fatalf("order %v gives %s, want %s", ids(p), got, want)
				}
			}
		})
	}
}

// TestSourceDigestIsStable pins the digest of a few document sets: a
// revision's name derives from it, so a change here would build every
// Corpus's revision anew after an upgrade.
func TestSourceDigestIsStable(t *testing.T) {
	for _, tc := range []struct {
		docs []hierarchy.Document
		want string
	}{
		{digestDocs(), "f98b133543a2e7d4"},
		{append(digestDocs(), hierarchy.Document{ID: "a", Text: "another alpha"}), "5f9322642898162e"},
		{nil, "e3b0c44298fc1c14"},
	} {
		if got := SourceDigest(tc.docs); got != tc.want {
			t.Errorf("SourceDigest of %v = %s, want %s", ids(tc.docs), got, tc.want)
		}
	}
}

func ids(docs []hierarchy.Document) []string {
	var out []string
	for _, d := range docs {
		out = append(out, d.ID)
	}
	return out
}

func TestSourceDigestSensitivity(t *testing.T) {
	ref := SourceDigest(digestDocs())
	tests := []struct {
		name   string
		change func([]hierarchy.Document) []hierarchy.Document
	}{
		{"text", func(d []hierarchy.Document) []hierarchy.Document { d[1].Text += "!"; return d }},
		{"text white space", func(d []hierarchy.Document) []hierarchy.Document { d[1].Text += " "; return d }},
		{"title", func(d []hierarchy.Document) []hierarchy.Document { d[1].Title = "B"; return d }},
		{"id", func(d []hierarchy.Document) []hierarchy.Document { d[1].ID = "b2"; return d }},
		{"metadata value", func(d []hierarchy.Document) []hierarchy.Document {
			d[0].Metadata = map[string]string{"k": "v2", "z": "w"}
			return d
		}},
		{"metadata key", func(d []hierarchy.Document) []hierarchy.Document {
			d[0].Metadata = map[string]string{"k2": "v", "z": "w"}
			return d
		}},
		{"metadata added", func(d []hierarchy.Document) []hierarchy.Document {
			d[1].Metadata = map[string]string{"x": ""}
			return d
		}},
		{"document added", func(d []hierarchy.Document) []hierarchy.Document { return append(d, hierarchy.Document{ID: "d"}) }},
		{"document removed", func(d []hierarchy.Document) []hierarchy.Document { return d[:2] }},
		{"document duplicated", func(d []hierarchy.Document) []hierarchy.Document { return append(d, d[2]) }},
		// Field boundaries: moving text from one field to the next changes
		// the digest.
		{"title into text", func(d []hierarchy.Document) []hierarchy.Document {
			d[2].Title, d[2].Text = "", "C"+d[2].Text
			return d
		}},
		{"id into title", func(d []hierarchy.Document) []hierarchy.Document {
			d[1].ID, d[1].Title = "", "b"
			return d
		}},
	}
	seen := map[string]string{ref: "reference"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SourceDigest(tt.change(digestDocs()))
			if prev, dup := seen[got]; dup {
				t.Errorf("digest %s equals that of %s", got, prev)
			}
			seen[got] = tt.name
		})
	}
}

func TestSourceDigestEmptyMetadata(t *testing.T) {
	// No metadata and empty metadata are the same source.
	a := []hierarchy.Document{{ID: "x", Text: "t"}}
	b := []hierarchy.Document{{ID: "x", Text: "t", Metadata: map[string]string{}}}
	if SourceDigest(a) != SourceDigest(b) {
		t.Error("nil and empty metadata give different digests")
	}
	if SourceDigest(nil) == SourceDigest(a) || !hex16.MatchString(SourceDigest(nil)) {
		t.Error("empty corpus digest")
	}
}

func TestRevision(t *testing.T) {
	e := Embedder{Kind: EmbedderLexical, K1: 0.9, B: 0.4}
	ref := Revision("policy", "digest", e, VectorStoreRef{}, "")
	if !hex16.MatchString(ref) {
		t.Fatalf("revision %q is not 16 hex digits", ref)
	}
	if again := Revision("policy", "digest", e, VectorStoreRef{Kind: VectorStoreEmbedded}, ""); again != ref {
		t.Errorf("revision not stable: %s then %s", ref, again)
	}
	tests := []struct {
		name           string
		policy, digest string
		e              Embedder
		vs             VectorStoreRef
		parentStore    string
	}{
		{"policy revision", "policy2", "digest", e, VectorStoreRef{}, ""},
		{"source digest", "policy", "digest2", e, VectorStoreRef{}, ""},
		{"boundary policy|digest", "policyd", "igest", e, VectorStoreRef{}, ""},
		{"embedder kind", "policy", "digest", Embedder{Kind: EmbedderOpenAI, K1: 0.9, B: 0.4}, VectorStoreRef{}, ""},
		{"k1", "policy", "digest", Embedder{Kind: EmbedderLexical, K1: 1.2, B: 0.4}, VectorStoreRef{}, ""},
		{"b", "policy", "digest", Embedder{Kind: EmbedderLexical, K1: 0.9, B: 0.75}, VectorStoreRef{}, ""},
		{"context weight", "policy", "digest", Embedder{Kind: EmbedderLexical, K1: 0.9, B: 0.4, ContextWeight: 0.8}, VectorStoreRef{}, ""},
		{"endpoint", "policy", "digest", Embedder{Kind: EmbedderOpenAI, Endpoint: "http://a"}, VectorStoreRef{}, ""},
		{"model", "policy", "digest", Embedder{Kind: EmbedderOpenAI, Endpoint: "http://a", Model: "m"}, VectorStoreRef{}, ""},
		{"dimensions", "policy", "digest", Embedder{Kind: EmbedderOpenAI, Endpoint: "http://a", Model: "m", Dimensions: 256}, VectorStoreRef{}, ""},
		{"milvus", "policy", "digest", e, VectorStoreRef{Kind: VectorStoreMilvus, Address: "milvus:19530"}, ""},
		{"milvus database", "policy", "digest", e, VectorStoreRef{Kind: VectorStoreMilvus, Address: "milvus:19530", Database: "rag"}, ""},
		{"on a claim", "policy", "digest", e, VectorStoreRef{}, ParentStoreClaim},
	}
	seen := map[string]string{ref: "reference"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Revision(tt.policy, tt.digest, tt.e, tt.vs, tt.parentStore)
			if prev, dup := seen[got]; dup {
				t.Errorf("revision %s equals that of %s", got, prev)
			}
			seen[got] = tt.name
		})
	}
}
