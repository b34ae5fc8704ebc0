package parentstore

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// trickyStrings are strings whose JSON escaping differs between careless
// encoders: quotes, backslashes, every control byte, HTML-sensitive
// bytes, DEL, U+2028/U+2029, multi-byte runes and invalid UTF-8.
func trickyStrings() []string {
	var controls strings.Builder
	for b := range 0x20 {
		controls.WriteByte(byte(b))
	}
	return []string{
		"", "plain", `say "hi" \ there`, controls.String(), "<a href='x'>&amp;</a>", "\x7f",
		"line\u2028sep\u2029para", "naïve café 日本語 🙂", "bad \xff\xfe utf-8 \xe2\x82", "\xed\xa0\x80 surrogate",
	}
}

// checkParentJSON fails unless appendParentJSON writes p as json.Marshal.
func checkParentJSON(t *testing.T, p hierarchy.Parent) {
	t.Helper()
	want, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendParentJSON(nil, &p); !bytes.Equal(got, want) {
		t.Fatalf("parent %+v:\n got %s\nwant %s", p, got, want)
	}
}

// TestParentJSONIsMarshal checks appendParentJSON against json.Marshal on
// parents with every field empty and set, tricky strings in each string,
// and that it knows every field hierarchy.Parent and hierarchy.Span have:
// a field added to either fails the test until the encoder writes it.
func TestParentJSONIsMarshal(t *testing.T) {
	if got, want := jsonNames(reflect.TypeFor[hierarchy.Parent]()), []string{"id", "docId", "title,omitempty", "headingPath,omitempty", "level,omitempty", "parentId,omitempty", "pages,omitempty", "ordinal", "text", "start", "children,omitempty", "metadata,omitempty"}; !slices.Equal(got, want) {
		t.Fatalf("hierarchy.Parent's JSON fields are %q; appendParentJSON writes %q", got, want)
	}
	if got, want := jsonNames(reflect.TypeFor[hierarchy.Span]()), []string{"id", "start", "end"}; !slices.Equal(got, want) {
		t.Fatalf("hierarchy.Span's JSON fields are %q; appendSpanJSON writes %q", got, want)
	}
	checkParentJSON(t, hierarchy.Parent{})
	checkParentJSON(t, hierarchy.Parent{HeadingPath: []string{}, Children: []hierarchy.Span{}, Metadata: map[string]string{}})
	for i, s := range trickyStrings() {
		checkParentJSON(t, hierarchy.Parent{
			ID: s, DocID: s + "d", Title: s, HeadingPath: []string{s, "h"}, Level: hierarchy.Level(s), ParentID: s + "p", Pages: &hierarchy.Pages{First: i, Last: -i}, Ordinal: -i, Text: strings.Repeat(s, 3), Start: 1 << 40,
			Children: []hierarchy.Span{{ID: s, Start: -1, End: i}, {ID: "c", Start: 0, End: 0}},
			Metadata: map[string]string{s: s, "b": "2", "a": "1", "A": s},
		})
	}
}

// Every byte, at every place of a string, among plain bytes next to
// those that need escaping, is written as json.Marshal writes it.
func TestJSONStringEscapesEveryByteAtEveryPlace(t *testing.T) {
	base := []byte("abc!#%'(;=?[]_ {}~\x7f0123")[:19]
	for b := range 256 {
		for at := range base {
			s := slices.Clone(base)
			s[at] = byte(b)
			want, err := json.Marshal(string(s))
			if err != nil {
				t.Fatal(err)
			}
			if got := appendJSONString(nil, string(s)); !bytes.Equal(got, want) {
				t.Fatalf("byte %#x at %d: got %s, want %s", b, at, got, want)
			}
		}
	}
}

// jsonNames returns the json tag of each field of struct type t.
func jsonNames(t reflect.Type) []string {
	var names []string
	for f := range t.Fields() {
		names = append(names, f.Tag.Get("json"))
	}
	return names
}

// FuzzParentJSONIsMarshal checks appendParentJSON against json.Marshal on
// parents made of arbitrary strings and numbers.
func FuzzParentJSONIsMarshal(f *testing.F) {
	for _, s := range trickyStrings() {
		f.Add(s, s, s, 3, -1)
	}
	f.Fuzz(func(t *testing.T, id, text, meta string, ordinal, start int) {
		p := hierarchy.Parent{ID: id, DocID: meta, Title: text, Ordinal: ordinal, Text: text, Start: start}
		if len(meta) > 0 {
			p.HeadingPath = []string{meta, id}
			p.Level, p.ParentID = hierarchy.Level(meta), id
			p.Pages = &hierarchy.Pages{First: start, Last: ordinal}
			p.Children = []hierarchy.Span{{ID: meta, Start: start, End: ordinal}}
			p.Metadata = map[string]string{meta: text, id: meta}
		}
		checkParentJSON(t, p)
	})
}
