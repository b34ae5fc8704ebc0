package v1alpha1

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/parentrag/parentrag/internal/chunking"
)

// chunkingPolicyCRD is the generated CRD users install.
const chunkingPolicyCRD = "../../config/crd/bases/parentrag.io_chunkingpolicies.yaml"

// strategySchema returns the schema of spec.strategy in the generated CRD.
func strategySchema(t *testing.T) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	data, err := os.ReadFile(chunkingPolicyCRD)
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.UnmarshalStrict(data, &crd); err != nil {
		t.Fatal(err)
	}
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Schema == nil {
		t.Fatalf("%s: want one version with a schema", chunkingPolicyCRD)
	}
	schema, ok := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Properties["strategy"]
	if !ok {
		t.Fatalf("%s has no spec.strategy", chunkingPolicyCRD)
	}
	return schema
}

// rawString decodes one JSON string of a schema.
func rawString(t *testing.T, v *apiextensionsv1.JSON) string {
	t.Helper()
	var s string
	if v == nil || json.Unmarshal(v.Raw, &s) != nil {
		t.Fatalf("schema value %v is not a string", v)
	}
	return s
}

// The values users may write in spec.strategy are exactly the declared
// strategies, in their order, and the default is the first: a strategy
// declared but missing from the Enum marker (or the reverse), or a CRD not
// regenerated, fails here.
func TestCRDStrategyEnumIsTheDeclaredStrategies(t *testing.T) {
	schema := strategySchema(t)
	var enum []chunking.Strategy
	for _, v := range schema.Enum {
		enum = append(enum, chunking.Strategy(rawString(t, &v)))
	}
	if want := chunking.Strategies(); !slices.Equal(enum, want) {
		t.Errorf("the CRD's spec.strategy enum is %v, the declared strategies %v: make the Enum marker on Strategy list them, then run make manifests", enum, want)
	}
	if got, want := rawString(t, schema.Default), string(StrategyParentChild); got != want {
		t.Errorf("the CRD's spec.strategy default is %q, want %q", got, want)
	}
}

// Every declared strategy is accepted by Validate and keeps its name in
// the normalised spec; only the strategies that read spec.window keep one.
func TestEveryDeclaredStrategyValidates(t *testing.T) {
	for _, st := range chunking.Strategies() {
		spec := ChunkingPolicySpec{Strategy: Strategy(st)}
		if err := spec.Validate(); err != nil {
			t.Errorf("%s: %v", st, err)
		}
		norm := spec.Normalized()
		if norm.Strategy != Strategy(st) {
			t.Errorf("%s normalises to strategy %q", st, norm.Strategy)
		}
		if got := norm.Window != nil; got != st.Window() {
			t.Errorf("%s: normalised window %v, want one only when the strategy reads it (%v)", st, norm.Window, st.Window())
		}
	}
}
