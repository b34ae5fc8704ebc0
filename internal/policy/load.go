// Package policy reads ChunkingPolicy files and compiles a policy spec into
// the retrieval core's splitters. It is the one bridge between the API types
// and the core, shared by the CLI and the operator.
package policy

import (
	"bytes"
	"fmt"
	"os"

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

// Parse decodes and validates a ChunkingPolicy document.
func Parse(data []byte) (*v1alpha1.ChunkingPolicy, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("empty document")
	}
	var p v1alpha1.ChunkingPolicy
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	if p.Kind != "" && p.Kind != "ChunkingPolicy" {
		return nil, fmt.Errorf("kind is %q, want ChunkingPolicy", p.Kind)
	}
	if p.APIVersion != "" && p.APIVersion != v1alpha1.GroupVersion.String() {
		return nil, fmt.Errorf("apiVersion is %q, want %s", p.APIVersion, v1alpha1.GroupVersion)
	}
	if err := p.Spec.Validate(); err != nil {
		return nil, fmt.Errorf("invalid: %w", err)
	}
	return &p, nil
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
