package sourceset

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/parentrag/parentrag/api/v1alpha1"
	dt "github.com/parentrag/parentrag/internal/document/documenttest"
	"github.com/parentrag/parentrag/internal/kubetest"
)

// TestConfigMapKeysOfEveryFormat reads a ConfigMap whose binaryData holds
// a PDF, a Word document and a broken PDF, and whose data holds an HTML
// page and a JSON Lines key: each key is one document in its format, the
// broken PDF a source error.
func TestConfigMapKeysOfEveryFormat(t *testing.T) {
	manual := dt.Manual(t, dt.ManualOptions{})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "docs"},
		Data: map[string]string{"page.html": "<main><h1>Page</h1><p>Text.</p></main>", "lines.jsonl": `{"_id":"x","text":"y"}`},
		BinaryData: map[string][]byte{
			"manual.pdf": manual, "guide.docx": dt.DOCX(t, dt.DOCXPart{Name: "word/document.xml", Data: dt.DOCXBody(dt.Para("", "Word."))}),
			"broken.pdf": manual[:len(manual)/2],
		}}
	var reads kubetest.Reads
	r := &Reader{Client: countingServer(t, &reads, cm), Namespace: "ns"}
	set, err := r.Read(t.Context(), []v1alpha1.Source{{Name: "s", ConfigMap: &v1alpha1.ConfigMapSource{Name: "docs"}}})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]string{}
	for _, d := range set.Docs {
		byID[d.ID] = d.Text
		if d.ID == "docs/manual.pdf" && (len(d.PageStarts) != 5 || d.Title != dt.ManualTitle) {
			t.Errorf("manual.pdf has %d pages and title %q", len(d.PageStarts), d.Title)
		}
	}
	if byID["docs/page.html"] != "# Page\n\nText.\n" || byID["docs/guide.docx"] != "Word.\n" || byID["docs/lines.jsonl"] != `{"_id":"x","text":"y"}` || !strings.Contains(byID["docs/manual.pdf"], "# 1 Introduction") {
		t.Errorf("documents %v", byID)
	}
	if len(set.Errors) != 1 || set.Errors[0].Document != "docs/broken.pdf" || !strings.Contains(set.Errors[0].Message, "truncated") {
		t.Errorf("errors %+v, want broken.pdf truncated", set.Errors)
	}
}

// TestInlineHTMLIsConverted checks that an inline document of HTML is
// read as HTML, its own title kept, and other inline text as it is.
func TestInlineHTMLIsConverted(t *testing.T) {
	set, err := (&Reader{}).Read(t.Context(), []v1alpha1.Source{{Name: "in", Inline: []v1alpha1.InlineDocument{
		{ID: "a.html", Text: "<h1>A</h1><p>Alpha &amp; more.</p>"},
		{ID: "b", Title: "Bee", Text: "<!DOCTYPE html><title>B page</title><p>Beta.</p>"},
		{ID: "c", Text: "# C\n\n<b>kept as written</b>"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]string{}
	for _, d := range set.Docs {
		got[d.ID] = [2]string{d.Title, d.Text}
	}
	want := map[string][2]string{"a.html": {"A", "# A\n\nAlpha & more.\n"}, "b": {"Bee", "Beta.\n"}, "c": {"", "# C\n\n<b>kept as written</b>"}}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s read as %q, want %q", id, got[id], w)
		}
	}
}
