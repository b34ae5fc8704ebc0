package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A quantity map value gets the rule and its map a bound; a quantity with
// its own rules only loses the pattern; anything else is left alone.
func TestRewriteQuantities(t *testing.T) {
	in := strings.Join([]string{
		"limits:",
		"  additionalProperties:",
		"    anyOf:",
		"    - type: integer",
		"    - type: string",
		"    " + quantityPattern,
		"    x-kubernetes-int-or-string: true",
		"  type: object",
		"size:",
		"  " + quantityPattern,
		"  x-kubernetes-int-or-string: true",
		"  x-kubernetes-validations:",
		"  - message: size must be a quantity",
		"name:",
		"  pattern: ^[a-z]+$",
		"",
	}, "\n")
	want := strings.Join([]string{
		"limits:",
		"  additionalProperties:",
		"    anyOf:",
		"    - type: integer",
		"    - type: string",
		"    maxLength: 64",
		"    x-kubernetes-int-or-string: true",
		"    x-kubernetes-validations:",
		"    - message: must be a quantity, such as 500m or 2 (CPU) or 512Mi or 10Gi (bytes)",
		"      rule: isQuantity(string(self))",
		"  maxProperties: 32",
		"  type: object",
		"size:",
		"  maxLength: 64",
		"  x-kubernetes-int-or-string: true",
		"  x-kubernetes-validations:",
		"  - message: size must be a quantity",
		"name:",
		"  pattern: ^[a-z]+$",
		"",
	}, "\n")
	if got := rewriteQuantities(in); got != want {
		t.Errorf("rewritten:\n%s\nwant:\n%s", got, want)
	}
}

// The committed CRDs are rewritten already: make manifests left no
// quantity pattern in them.
func TestCommittedCRDsHaveNoQuantityPattern(t *testing.T) {
	files, err := filepath.Glob("../../config/crd/bases/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if out := rewriteQuantities(string(data)); out != string(data) {
			t.Errorf("%s still has a quantity pattern: run make manifests", f)
		}
	}
}
