// Command crd-quantities rewrites the quantity fields of the CRDs that
// controller-gen wrote: the pattern it gives every resource.Quantity makes
// the API server answer a bad quantity with that regular expression, so it
// is replaced by a length bound and a CEL isQuantity rule with a message a
// person can act on; a map of quantities (resources' requests and limits)
// gets a bound on its entries, which keeps the rule's estimated cost within
// the API server's budget. A field that already has its own rules keeps
// them, and the length bound in place of the pattern. It runs as part of
// make manifests:
//
//	go run ./hack/crd-quantities config/crd/bases/*.yaml
package main

import (
	"fmt"
	"os"
	"strings"
)

// quantityPattern is the pattern controller-gen gives resource.Quantity.
const quantityPattern = `pattern: ^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`

// quantityRules is what replaces the pattern, indented as the field's keys:
// a quantity is short, and the bound keeps the rule's CEL cost small.
const quantityRules = quantityMaxLength + `
x-kubernetes-int-or-string: true
x-kubernetes-validations:
- message: must be a quantity, such as 500m or 2 (CPU) or 512Mi or 10Gi (bytes)
  rule: isQuantity(string(self))`

// quantityMaxLength bounds a quantity's length, and so the cost of its
// rules.
const quantityMaxLength = "maxLength: 64"

func main() {
	for _, path := range os.Args[1:] {
		if err := rewrite(path); err != nil {
			fmt.Fprintf(os.Stderr, "crd-quantities: %v\n", err)
			os.Exit(1)
		}
	}
}

// rewrite rewrites the quantity fields of the CRD in path in place.
func rewrite(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out := rewriteQuantities(string(data))
	if out == string(data) {
		return nil
	}
	return os.WriteFile(path, []byte(out), 0o644)
}

// maxQuantities bounds the entries of a map of quantities: resource names
// are few.
const maxQuantities = 32

// rewriteQuantities returns the CRD text with each quantity pattern, the
// line before "x-kubernetes-int-or-string: true", replaced by
// quantityRules, or by the length bound alone where x-kubernetes-validations
// follow; a
// quantity that is the additionalProperties of a map bounds the map's
// entries.
func rewriteQuantities(text string) string {
	lines := strings.Split(text, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
		if strings.TrimSpace(line) != quantityPattern || i+1 >= len(lines) || lines[i+1] != indent+"x-kubernetes-int-or-string: true" {
			out = append(out, line)
			continue
		}
		if i+2 < len(lines) && strings.HasPrefix(lines[i+2], indent+"x-kubernetes-validations:") {
			// The field's own rules say what a quantity is.
			out = append(out, indent+quantityMaxLength)
			continue
		}
		for _, r := range strings.Split(quantityRules, "\n") {
			out = append(out, indent+r)
		}
		if parent := keyOf(lines, i, indent); parent == "additionalProperties:" {
			out = append(out, fmt.Sprintf("%smaxProperties: %d", indent[2:], maxQuantities))
		}
		i++ // x-kubernetes-int-or-string is in quantityRules
	}
	return strings.Join(out, "\n")
}

// keyOf returns the key, trimmed, whose value is the mapping that line i
// belongs to, its keys at indent: the nearest line above with less indent.
func keyOf(lines []string, i int, indent string) string {
	for j := i - 1; j >= 0; j-- {
		if !strings.HasPrefix(lines[j], indent) {
			return strings.TrimSpace(lines[j])
		}
	}
	return ""
}
