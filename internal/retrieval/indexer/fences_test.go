package indexer

import (
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

func TestMaskQuotesInFencesBlanksWhatCodeQuotes(t *testing.T) {
	text := "Ask \"How does a rollout work?\" in prose.\n\n```sh\ncurl -d '{\"query\":\"How does a rollout work?\"}' http://x\necho it's open\n```\n\n~~~\nsay `rollout` \"naïve\"\n~~~\nAfter: \"rollout\".\n"
	want := "Ask \"How does a rollout work?\" in prose.\n\n```sh\ncurl -d '                                    ' http://x\necho it's open\n```\n\n~~~\nsay `       ` \"      \"\n~~~\nAfter: \"rollout\".\n"
	got := maskQuotesInFences(text)
	if got != want {
		t.Errorf("masked\n%q\nwant\n%q", got, want)
	}
	if len(got) != len(text) {
		t.Errorf("masking changed the length from %d to %d bytes", len(text), len(got))
	}
	if plain := "no fence, \"quoted\""; maskQuotesInFences(plain) != plain {
		t.Error("text without a fence changed")
	}
}

func TestProseIsWhatIsNotCode(t *testing.T) {
	for doc, want := range map[*hierarchy.Document]bool{
		{ID: "guide.md"}:  true,
		{ID: "notes.txt"}: true,
		{ID: "page.html"}: true,
		{ID: "main.go"}:   false,
		{ID: "tool", Metadata: map[string]string{hierarchy.MetaLanguage: "python"}}: false,
		{ID: "x.md", Metadata: map[string]string{hierarchy.MetaFormat: "Code"}}:     false,
	} {
		if got := isProse(*doc); got != want {
			t.Errorf("isProse(%s %v) = %v, want %v", doc.ID, doc.Metadata, got, want)
		}
	}
}
