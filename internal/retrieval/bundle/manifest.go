// Package bundle persists a built index as a revision bundle: a directory
// holding the manifest, the parent store, the child index and the embedder
// state. The manifest is written last, so a directory without one is never
// mistaken for a complete index.
package bundle

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/filesum"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// FormatVersion is the bundle layout this code writes and reads.
const FormatVersion = 1

// File and folder names inside a bundle.
const (
	ManifestFile = "manifest.json"
	ChildrenDir  = "children"
	LexicalFile  = "lexical.stats"
)

// Manifest describes a bundle: what built it and what it holds.
type Manifest struct {
	FormatVersion int `json:"formatVersion"`
	// Revision names the bundle: a hash of everything that shapes the index.
	Revision string `json:"revision"`
	// PolicyRevision is the chunking policy's own revision.
	PolicyRevision string `json:"policyRevision"`
	// Policy is the normalised chunking policy spec, as JSON.
	Policy json.RawMessage `json:"policy,omitempty"`
	// LengthUnit and Tokenizer say how budgets are measured at query time.
	LengthUnit string `json:"lengthUnit"`
	Tokenizer  string `json:"tokenizer,omitempty"`
	// SourceDigest is a hash of every document's id and text.
	SourceDigest string   `json:"sourceDigest"`
	Embedder     Embedder `json:"embedder"`
	// VectorStore says where the children are: in the bundle (embedded,
	// the default) or in a Milvus collection.
	VectorStore VectorStoreRef `json:"vectorStore"`
	Documents   int            `json:"documents"`
	Parents     int            `json:"parents"`
	Children    int            `json:"children"`
	// Bytes is the bundle's size on disk, manifest excluded.
	Bytes     int64     `json:"bytes"`
	CreatedAt time.Time `json:"createdAt"`
	// Files lists every file of the bundle but the manifest, with its
	// size and sha256; opening the bundle verifies each. Bundles written
	// before it existed have none and are opened unverified.
	Files []FileSum `json:"files,omitempty"`
}

// FileSum is one file of a bundle and what it must hold.
type FileSum struct {
	// Path is relative to the bundle directory, with slashes.
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Embedder records how children were embedded, so queries are embedded the
// same way.
type Embedder struct {
	// Kind is "lexical" (BM25 sparse vectors), "openai" (dense vectors) or
	// "hybrid" (both: BM25 with K1 and B, and the endpoint's vectors).
	Kind string  `json:"kind"`
	K1   float64 `json:"k1,omitempty"`
	B    float64 `json:"b,omitempty"`
	// ContextWeight is the weight of each child's context (document title
	// and parent text) in its vector; 0 embeds the child alone.
	ContextWeight float64 `json:"contextWeight,omitempty"`
	// Endpoint, Model, Dimensions and APIKeyEnv configure an OpenAI-
	// compatible endpoint; the key itself is never stored.
	Endpoint   string `json:"endpoint,omitempty"`
	Model      string `json:"model,omitempty"`
	Dimensions int    `json:"dimensions,omitempty"`
	APIKeyEnv  string `json:"apiKeyEnv,omitempty"`
}

// VectorStoreRef locates a bundle's children. Credentials are never
// stored: a reader takes them from MILVUS_TOKEN, or MILVUS_USERNAME and
// MILVUS_PASSWORD, and for Postgres from PARENTRAG_POSTGRES_DSN or the
// PG* variables of libpq (see PostgresConfig).
type VectorStoreRef struct {
	// Kind is "embedded" (or empty), "segments", "milvus" or "postgres".
	Kind string `json:"kind,omitempty"`
	// Segments names the files of a child index of segments, in order,
	// under children/segments.
	Segments []string `json:"segments,omitempty"`
	// Address, Database, Collection, TLS, Dense, Metric and Consistency
	// locate and describe a Milvus collection. For Postgres, Address is
	// the server's host:port and Database its database, as the operator
	// read them from the connection Secret (they name where the table
	// lives; the connection itself comes from the environment).
	Address     string `json:"address,omitempty"`
	Database    string `json:"database,omitempty"`
	Collection  string `json:"collection,omitempty"`
	TLS         bool   `json:"tls,omitempty"`
	Dense       int    `json:"dense,omitempty"`
	Metric      string `json:"metric,omitempty"`
	Consistency string `json:"consistency,omitempty"`
	// Index, HNSWM, HNSWEfConstruction and HNSWEf describe the dense index;
	// query pods search with HNSWEf.
	Index              string `json:"index,omitempty"`
	HNSWM              int    `json:"hnswM,omitempty"`
	HNSWEfConstruction int    `json:"hnswEfConstruction,omitempty"`
	HNSWEf             int    `json:"hnswEf,omitempty"`
	// Schema and Table name a Postgres revision's table; SSLMode is the
	// libpq sslmode readers connect with ("" leaves it to the
	// connection string).
	Schema  string `json:"schema,omitempty"`
	Table   string `json:"table,omitempty"`
	SSLMode string `json:"sslMode,omitempty"`
	// MaxConns bounds each reader's connections to Postgres; it is not
	// part of the revision.
	MaxConns int `json:"maxConns,omitempty"`
}

// Vector store kinds.
const (
	VectorStoreEmbedded = "embedded"
	VectorStoreSegments = "segments"
	VectorStoreMilvus   = "milvus"
	VectorStorePostgres = "postgres"
)

// External reports whether the children live outside the bundle, in a
// database the manifest names.
func (r VectorStoreRef) External() bool {
	return r.Kind == VectorStoreMilvus || r.Kind == VectorStorePostgres
}

// Embedder kinds.
const (
	EmbedderLexical = "lexical"
	EmbedderOpenAI  = "openai"
	EmbedderHybrid  = "hybrid"
)

// ReadManifest reads the manifest of the bundle in dir, refusing a
// directory that holds no complete bundle of this format.
func ReadManifest(dir string) (Manifest, error) {
	var m Manifest
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if errors.Is(err, os.ErrNotExist) {
		return m, fmt.Errorf("%s is not a complete parentrag index (no %s)", dir, ManifestFile)
	}
	if err != nil {
		return m, fmt.Errorf("reading manifest: %w", err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return m, fmt.Errorf("%s: corrupt manifest: %w", dir, err)
	}
	if m.FormatVersion != FormatVersion {
		return m, fmt.Errorf("%s: index format %d, this parentrag reads %d: rebuild the index", dir, m.FormatVersion, FormatVersion)
	}
	return m, nil
}

// writeManifest writes the manifest atomically and durably: it is synced
// before it is renamed into place, as the stores' files are.
func writeManifest(dir string, m Manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	_, err = filesum.WriteFile(filepath.Join(dir, ManifestFile), func(w io.Writer) error {
		_, err := w.Write(append(data, '\n'))
		return err
	})
	return err
}

// Leaf names the level of the bundle's children: the smallest of its
// policy's levels, child when it names none.
func (m *Manifest) Leaf() hierarchy.Level {
	var p struct {
		Levels []string `json:"levels"`
	}
	if json.Unmarshal(m.Policy, &p) != nil || len(p.Levels) == 0 {
		return hierarchy.LevelChild
	}
	return hierarchy.Level(strings.ToLower(p.Levels[len(p.Levels)-1]))
}

// ParentsOverlap reports whether the strategy the policy records declares
// that its parents overlap (sentence windows do): the bundle's retriever
// merges overlapping hits. A manifest without a readable policy, or whose
// strategy this parentrag does not declare, merges nothing.
func (m *Manifest) ParentsOverlap() bool {
	var p struct {
		Strategy chunking.Strategy `json:"strategy"`
	}
	return json.Unmarshal(m.Policy, &p) == nil && p.Strategy.ParentsOverlap()
}
