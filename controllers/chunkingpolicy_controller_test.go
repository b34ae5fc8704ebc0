package controllers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// codeRule is a formats rule for source code that changes nothing.
var codeRule = v1alpha1.FormatRule{Match: v1alpha1.FormatMatch{Format: v1alpha1.FormatCode}}

// formats returns a policy that holds only the given formats rules.
func formats(rules ...v1alpha1.FormatRule) v1alpha1.ChunkingPolicySpec {
	return v1alpha1.ChunkingPolicySpec{Formats: rules}
}

func TestAPIServerRefusesInvalidPolicies(t *testing.T) {
	tests := []struct {
		name string
		spec v1alpha1.ChunkingPolicySpec
		want string
	}{
		{"child not smaller than parent", v1alpha1.ChunkingPolicySpec{Parent: &v1alpha1.ChunkSize{ChunkSize: 200}, Child: &v1alpha1.ChunkSize{ChunkSize: 300}}, "child.chunkSize 300 must be smaller than parent.chunkSize 200"},
		{"child default above parent", v1alpha1.ChunkingPolicySpec{Parent: &v1alpha1.ChunkSize{ChunkSize: 250}}, "child.chunkSize 300 (the default) must be smaller than parent.chunkSize 250"},
		{"overlap not smaller than size", v1alpha1.ChunkingPolicySpec{Child: &v1alpha1.ChunkSize{ChunkSize: 100, ChunkOverlap: 100}}, "chunkOverlap must be smaller than chunkSize"},
		{"zero size", v1alpha1.ChunkingPolicySpec{Child: &v1alpha1.ChunkSize{ChunkSize: 0}}, "spec.child.chunkSize"},
		{"window too wide", v1alpha1.ChunkingPolicySpec{Window: &v1alpha1.Window{Sentences: 11}}, "spec.window.sentences"},
		{"unknown strategy", v1alpha1.ChunkingPolicySpec{Strategy: "Paragraphs"}, `Unsupported value: "Paragraphs"`},
		{"regex without separators", v1alpha1.ChunkingPolicySpec{Separators: &v1alpha1.Separators{Regex: true}}, "separators.regex needs a custom separator list"},
		{"unknown parent boundaries", v1alpha1.ChunkingPolicySpec{Parent: &v1alpha1.ChunkSize{ChunkSize: 1500, Boundaries: "Headings"}}, `Unsupported value: "Headings"`},
		{"minChunkSize not smaller than chunkSize", v1alpha1.ChunkingPolicySpec{Parent: &v1alpha1.ChunkSize{ChunkSize: 1500, MinChunkSize: 1500}}, "minChunkSize 1500 must be smaller than chunkSize 1500"},
		{"boundaries under child", v1alpha1.ChunkingPolicySpec{Child: &v1alpha1.ChunkSize{ChunkSize: 300, Boundaries: v1alpha1.BoundariesSections}}, "boundaries and minChunkSize apply to parents only"},
		{"sections with sentence windows", v1alpha1.ChunkingPolicySpec{Strategy: v1alpha1.StrategySentenceWindow, Parent: &v1alpha1.ChunkSize{ChunkSize: 1500, Boundaries: v1alpha1.BoundariesSections}}, "parent.boundaries Sections needs strategy ParentChild"},
		{"formats match names nothing", formats(v1alpha1.FormatRule{Parent: &v1alpha1.ChunkSize{ChunkSize: 900}}), "match takes a format or languages, not both and not neither"},
		{"formats match names both", formats(v1alpha1.FormatRule{Match: v1alpha1.FormatMatch{Format: v1alpha1.FormatCode, Languages: []v1alpha1.Language{"go"}}}), "match takes a format or languages, not both and not neither"},
		{"two rules for one format", formats(codeRule, codeRule), "two rules match the same format; merge them into one"},
		{"two rules for one language", formats(
			v1alpha1.FormatRule{Match: v1alpha1.FormatMatch{Languages: []v1alpha1.Language{"go"}}},
			v1alpha1.FormatRule{Match: v1alpha1.FormatMatch{Languages: []v1alpha1.Language{"python", "go"}}}), "a language may appear in one rule only"},
		{"rule unit without sizes", formats(v1alpha1.FormatRule{Match: codeRule.Match, LengthUnit: v1alpha1.LengthTokens}), "a formats rule that sets lengthUnit must set parent and child too"},
		{"rule inherits a child too large", formats(v1alpha1.FormatRule{Match: codeRule.Match, Parent: &v1alpha1.ChunkSize{ChunkSize: 200}}), "child.chunkSize must be smaller than parent.chunkSize"},
		{"rule sections with sentence windows", v1alpha1.ChunkingPolicySpec{Strategy: v1alpha1.StrategySentenceWindow,
			Formats: []v1alpha1.FormatRule{{Match: codeRule.Match, Parent: &v1alpha1.ChunkSize{ChunkSize: 1500, Boundaries: v1alpha1.BoundariesSections}}}}, "parent.boundaries Sections needs strategy ParentChild"},
		{"rule minChunkSize under child", formats(v1alpha1.FormatRule{Match: codeRule.Match, Child: &v1alpha1.ChunkSize{ChunkSize: 100, MinChunkSize: 10}}), "boundaries and minChunkSize apply to parents only"},
		{"unknown format", formats(v1alpha1.FormatRule{Match: v1alpha1.FormatMatch{Format: "Slides"}}), `Unsupported value: "Slides"`},
		{"unknown language", formats(v1alpha1.FormatRule{Match: v1alpha1.FormatMatch{Languages: []v1alpha1.Language{"klingon"}}}), `Unsupported value: "klingon"`},
		{"rule regex without separators", formats(v1alpha1.FormatRule{Match: codeRule.Match, Separators: &v1alpha1.Separators{Regex: true}}), "separators.regex needs a custom separator list"},
		{"unknown preset", formats(v1alpha1.FormatRule{Match: codeRule.Match, Separators: &v1alpha1.Separators{Preset: "Go"}}), `Unsupported value: "Go"`},
		{"rule overlap not smaller than size", formats(v1alpha1.FormatRule{Match: codeRule.Match, Child: &v1alpha1.ChunkSize{ChunkSize: 100, ChunkOverlap: 100}}), "chunkOverlap must be smaller than chunkSize"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &v1alpha1.ChunkingPolicy{ObjectMeta: metav1.ObjectMeta{Name: uniqueName("invalid")}, Spec: tt.spec}
			err := k8s.Create(context.Background(), p)
			if !apierrors.IsInvalid(err) {
				t.Fatalf("create returned %v, want Invalid", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not say %q", err, tt.want)
			}
			// The Go validation used by the command line agrees.
			if tt.spec.Validate() == nil {
				t.Fatalf("spec.Validate() accepts what the API server refuses")
			}
		})
	}
}

func TestAPIServerAcceptsFormats(t *testing.T) {
	spec := v1alpha1.ChunkingPolicySpec{
		Separators: &v1alpha1.Separators{Preset: v1alpha1.SeparatorsMarkdown},
		Parent:     &v1alpha1.ChunkSize{ChunkSize: 1500, Boundaries: v1alpha1.BoundariesSections},
		Formats: []v1alpha1.FormatRule{
			{Match: v1alpha1.FormatMatch{Format: v1alpha1.FormatCode}, LengthUnit: v1alpha1.LengthTokens,
				Parent: &v1alpha1.ChunkSize{ChunkSize: 400, Boundaries: v1alpha1.BoundariesSections}, Child: &v1alpha1.ChunkSize{ChunkSize: 100}},
			{Match: v1alpha1.FormatMatch{Languages: []v1alpha1.Language{"python", "rst"}}, Separators: &v1alpha1.Separators{Preset: v1alpha1.SeparatorsLanguage}},
			{Match: v1alpha1.FormatMatch{Format: v1alpha1.FormatPDF}, Parent: &v1alpha1.ChunkSize{ChunkSize: 2000}},
		},
	}
	if err := spec.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	p := &v1alpha1.ChunkingPolicy{ObjectMeta: metav1.ObjectMeta{Name: uniqueName("formats")}, Spec: spec}
	if err := k8s.Create(context.Background(), p); err != nil {
		t.Fatalf("the API server refuses a valid policy with formats: %v", err)
	}
	waitCurrent(t, p, 20*time.Second)
	if p.Status.Revision != p.Spec.Revision() {
		t.Fatalf("status revision %q, want %q", p.Status.Revision, p.Spec.Revision())
	}
}

func TestPolicyPublishesRevisionAndUsers(t *testing.T) {
	ns := newNamespace(t)
	p := newPolicy(t, 1200, 240)
	waitCurrent(t, p, 20*time.Second)
	if p.Status.Revision != p.Spec.Revision() || p.Status.Corpora != 0 {
		t.Fatalf("status revision %q corpora %d, want %q and 0", p.Status.Revision, p.Status.Corpora, p.Spec.Revision())
	}
	// kubectl get cp prints these columns: 0 Corpora is written, not left
	// out, and the sizes in effect are shown for a policy on defaults.
	def := &v1alpha1.ChunkingPolicy{ObjectMeta: metav1.ObjectMeta{Name: uniqueName("defaults")}}
	if err := k8s.Create(context.Background(), def); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, def, 20*time.Second)
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("ChunkingPolicy"))
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(def), u); err != nil {
		t.Fatal(err)
	}
	corpora, found, _ := unstructured.NestedInt64(u.Object, "status", "corpora")
	parent, _, _ := unstructured.NestedInt64(u.Object, "status", "parentChunkSize")
	child, _, _ := unstructured.NestedInt64(u.Object, "status", "childChunkSize")
	if !found || corpora != 0 || parent != v1alpha1.DefaultParentChunkSize || child != v1alpha1.DefaultChildChunkSize {
		t.Fatalf("status of a policy on defaults: corpora %d (written: %v), parentChunkSize %d, childChunkSize %d; want 0 written, %d, %d",
			corpora, found, parent, child, v1alpha1.DefaultParentChunkSize, v1alpha1.DefaultChildChunkSize)
	}
	c := inlineCorpus(ns, p.Name, sampleDocs()...)
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the policy to count its Corpus", func() (bool, error) {
		get(t, p)
		return p.Status.Corpora == 1 && meta.IsStatusConditionTrue(p.Status.Conditions, v1alpha1.ConditionInUse), nil
	})
}

func TestDeletingAPolicyInUseWaitsForItsCorpora(t *testing.T) {
	ns := newNamespace(t)
	p := newPolicy(t, 1000, 200)
	c := inlineCorpus(ns, p.Name, sampleDocs()...)
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 60*time.Second)
	eventually(t, 20*time.Second, "the policy finalizer", func() (bool, error) {
		get(t, p)
		return len(p.Finalizers) > 0 && p.Status.Corpora == 1, nil
	})
	if err := k8s.Delete(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the policy to say why it stays", func() (bool, error) {
		get(t, p)
		ready := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionReady)
		return ready != nil && ready.Reason == v1alpha1.ReasonDeletionBlocked && strings.Contains(ready.Message, "1 Corpus ("+ns+"/"+c.Name+") still uses this policy"), fmt.Errorf("Ready %+v", ready)
	})
	// The Corpus is not broken by the pending deletion.
	waitCurrent(t, c, 10*time.Second)
	if err := k8s.Delete(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the policy to go once unused", func() (bool, error) {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(p), p)
		return apierrors.IsNotFound(err), err
	})
}
