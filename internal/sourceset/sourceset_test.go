package sourceset

import (
	"strings"
	"testing"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

func TestEmptyInlineDocumentsAreSourceErrors(t *testing.T) {
	set, err := (&Reader{}).Read(t.Context(), []v1alpha1.Source{{Name: "in", Inline: []v1alpha1.InlineDocument{
		{ID: "full", Text: "Some text."}, {ID: "empty", Text: ""}, {ID: "blank", Text: " \n\t\u00a0 "},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	if set.Count() != 1 || len(set.Docs) != 1 || set.Docs[0].ID != "full" {
		t.Errorf("kept %+v (count %d), want only full", set.Docs, set.Count())
	}
	if len(set.Errors) != 2 || set.ErrorCount != 2 {
		t.Fatalf("errors %+v, want 2", set.Errors)
	}
	for i, id := range []string{"empty", "blank"} {
		e := set.Errors[i]
		if e.Source != "in" || e.Document != id || !strings.Contains(e.Message, "document "+id+" is empty") {
			t.Errorf("error %d: %+v", i, e)
		}
	}
}
