// Package policy reads ChunkingPolicy files and compiles a policy spec into
// the retrieval core's splitters. It is the one bridge between the API types
// and the core, shared by the CLI and the operator.
package policy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// Load reads a ChunkingPolicy from a YAML or JSON file and validates it with
// the rules the CRD enforces. Unknown fields are refused, so a misspelt
// field is an error rather than a silent default.
func Load(path string) (*v1alpha1.ChunkingPolicy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading policy: %w", err)
	}
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", path, err)
	}
	return p, nil
}

// Parse decodes and validates a ChunkingPolicy document. The data must hold
// exactly one YAML or JSON document; comments and "---" lines alone are an
// empty document.
func Parse(data []byte) (*v1alpha1.ChunkingPolicy, error) {
	doc, err := singleDocument(data)
	if err != nil {
		return nil, err
	}
	var p v1alpha1.ChunkingPolicy
	if err := decodeStrict(doc, &p); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	if p.Kind != "" && p.Kind != "ChunkingPolicy" {
		return nil, fmt.Errorf("kind is %q, want ChunkingPolicy", p.Kind)
	}
	if p.APIVersion != "" && p.APIVersion != v1alpha1.GroupVersion.String() {
		return nil, fmt.Errorf("apiVersion is %q, want %s", p.APIVersion, v1alpha1.GroupVersion)
	}
	if err := applySchemaDefaults(doc, &p); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	if err := p.Spec.Validate(); err != nil {
		return nil, fmt.Errorf("invalid: %w", err)
	}
	return &p, nil
}

// singleDocument returns the one non-empty YAML document in data, refusing
// data without one ("empty document") and data with several, of which all
// but the first would otherwise be silently ignored.
func singleDocument(data []byte) ([]byte, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("empty document")
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("decoding: %w", err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("decoding: %w", err)
		}
		if t := bytes.TrimSpace(js); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			continue // only comments, blank lines or a document marker
		}
		docs = append(docs, doc)
	}
	switch len(docs) {
	case 0:
		return nil, fmt.Errorf("empty document")
	case 1:
		return docs[0], nil
	default:
		return nil, fmt.Errorf("%d YAML documents, want one ChunkingPolicy per file", len(docs))
	}
}

// decodeStrict decodes one YAML or JSON document as the API server does:
// field names are case-sensitive, and unknown or duplicate fields are
// errors. (sigs.k8s.io/yaml's UnmarshalStrict matches field names without
// regard to case, so it would accept "chunksize" for "chunkSize", which the
// API server prunes.)
func decodeStrict(doc []byte, p *v1alpha1.ChunkingPolicy) error {
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return err
	}
	strict, err := sigsjson.UnmarshalStrict(js, p)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// applySchemaDefaults applies the CRD's +kubebuilder:default markers that a
// Go zero value cannot express: "window: {}" means sentences: 2 on the API
// server, so it must read so from a file too.
func applySchemaDefaults(doc []byte, p *v1alpha1.ChunkingPolicy) error {
	var raw struct {
		Spec struct {
			Window *struct {
				Sentences *int `json:"sentences"`
			} `json:"window"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(doc, &raw); err != nil {
		return err
	}
	if w := raw.Spec.Window; w != nil && w.Sentences == nil && p.Spec.Window != nil {
		p.Spec.Window.Sentences = v1alpha1.DefaultWindowSentences
	}
	return nil
}

// Default returns the policy used when none is given: ParentChild, parents
// of 1500 and children of 300 characters with an overlap of 30.
func Default() *v1alpha1.ChunkingPolicy {
	p := &v1alpha1.ChunkingPolicy{}
	p.APIVersion = v1alpha1.GroupVersion.String()
	p.Kind = "ChunkingPolicy"
	p.Name = "default"
	return p
}
