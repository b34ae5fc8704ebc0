package hierarchy

import (
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/parentrag/parentrag/internal/chunking"
	"github.com/parentrag/parentrag/internal/fieldhash"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

// recursive returns a LangChain-default recursive splitter of the given
// size and overlap in code points.
func recursive(t testing.TB, size, overlap int) *split.Recursive {
	t.Helper()
	s, err := split.NewRecursive(split.DefaultOptions(size, overlap))
	if err != nil {
		t.Fatalf("NewRecursive(%d, %d): %v", size, overlap, err)
	}
	return s
}

// parentChild returns a ParentChild builder with recursive splitters.
func parentChild(t testing.TB, rev string, parentSize, parentOverlap, childSize, childOverlap int) *Builder {
	t.Helper()
	return &Builder{
		Strategy: chunking.ParentChild,
		Revision: rev,
		Parent:   recursive(t, parentSize, parentOverlap),
		Child:    recursive(t, childSize, childOverlap),
	}
}

// runeSlice returns the code points [start, end) of s, or "" with ok false
// when the range is out of bounds.
func runeSlice(s string, start, end int) (string, bool) {
	r := []rune(s)
	if start < 0 || end < start || end > len(r) {
		return "", false
	}
	return string(r[start:end]), true
}

// nonSpace returns s without any white space.
func nonSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

// checkInvariants verifies the structural promises of a Result for doc:
// ordinals, unique ids, parent links, spans and document offsets.
func checkInvariants(t *testing.T, doc Document, res Result) {
	t.Helper()
	parents := map[string]*Parent{}
	for i := range res.Parents {
		p := &res.Parents[i]
		if p.Ordinal != i {
			t.Errorf("parent %d has ordinal %d", i, p.Ordinal)
		}
		if _, dup := parents[p.ID]; dup {
			t.Errorf("parent id %s appears twice", p.ID)
		}
		parents[p.ID] = p
		if p.DocID != doc.ID || p.Title != doc.Title || !reflect.DeepEqual(p.Metadata, doc.Metadata) {
			t.Errorf("parent %d: doc fields %q/%q/%v, want %q/%q/%v", i, p.DocID, p.Title, p.Metadata, doc.ID, doc.Title, doc.Metadata)
		}
		if len(p.ID) != idLength {
			t.Errorf("parent id %q has %d digits, want %d", p.ID, len(p.ID), idLength)
		}
		if got, ok := runeSlice(doc.Text, p.Start, p.Start+utf8.RuneCountInString(p.Text)); !ok || got != p.Text {
			t.Errorf("parent %d: Start %d locates %q in the document, want %q", i, p.Start, got, p.Text)
		}
	}
	children := map[string]*Child{}
	byParent := map[string][]string{}
	for i := range res.Children {
		c := &res.Children[i]
		if c.Ordinal != i {
			t.Errorf("child %d has ordinal %d", i, c.Ordinal)
		}
		if _, dup := children[c.ID]; dup {
			t.Errorf("child id %s appears twice", c.ID)
		}
		children[c.ID] = c
		if c.DocID != doc.ID {
			t.Errorf("child %d: DocID %q, want %q", i, c.DocID, doc.ID)
		}
		p, ok := parents[c.ParentID]
		if !ok {
			t.Errorf("child %d: ParentID %q names no parent of the result", i, c.ParentID)
			continue
		}
		byParent[p.ID] = append(byParent[p.ID], c.ID)
		if got, ok := runeSlice(doc.Text, c.Start, c.Start+utf8.RuneCountInString(c.Text)); !ok || got != c.Text {
			t.Errorf("child %d: Start %d locates %q in the document, want %q", i, c.Start, got, c.Text)
		}
		if c.Start != p.Start+c.ParentStart {
			t.Errorf("child %d: Start %d, want parent start %d + ParentStart %d", i, c.Start, p.Start, c.ParentStart)
		}
	}
	for _, p := range res.Parents {
		var spanIDs []string
		for _, s := range p.Children {
			spanIDs = append(spanIDs, s.ID)
			c, ok := children[s.ID]
			if !ok {
				t.Errorf("parent %s lists span of unknown child %s", p.ID, s.ID)
				continue
			}
			if c.ParentID != p.ID {
				t.Errorf("parent %s lists child %s of parent %s", p.ID, c.ID, c.ParentID)
			}
			if got, ok := runeSlice(p.Text, s.Start, s.End); !ok || got != c.Text {
				t.Errorf("parent %s: span [%d,%d) locates %q, want child text %q", p.ID, s.Start, s.End, got, c.Text)
			}
			if s.Start != c.ParentStart {
				t.Errorf("span start %d of child %s, child says ParentStart %d", s.Start, c.ID, c.ParentStart)
			}
		}
		if !reflect.DeepEqual(spanIDs, byParent[p.ID]) {
			t.Errorf("parent %s lists children %v, children naming it are %v", p.ID, spanIDs, byParent[p.ID])
		}
	}
}

// paragraphs makes a document of n paragraphs of words, each about width
// code points, separated by blank lines.
func paragraphs(n, width int, word string) string {
	var paras []string
	for i := range n {
		var b strings.Builder
		for b.Len() == 0 || utf8.RuneCountInString(b.String()) < width {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(word)
			b.WriteByte(byte('a' + i%26))
		}
		paras = append(paras, b.String())
	}
	return strings.Join(paras, "\n\n")
}

func TestBuildParentChildInvariants(t *testing.T) {
	tests := []struct {
		name                string
		text                string
		parentSize, parentO int
		childSize, childO   int
	}{
		{"ascii paragraphs", paragraphs(6, 120, "lorem"), 200, 0, 50, 10},
		{"ascii parent overlap", paragraphs(6, 120, "ipsum"), 200, 40, 60, 0},
		{"one short paragraph", "Just a few words.", 200, 0, 50, 10},
		{"single long word", strings.Repeat("x", 230), 100, 0, 30, 5},
		{"multi-byte", paragraphs(5, 90, "größe"), 150, 0, 40, 8},
		{"emoji", paragraphs(5, 90, "🎉party😀"), 150, 0, 40, 8},
		{"cjk and accents", "日本語のテキスト 中文句子 " + paragraphs(4, 80, "éàü") + "\n\n" + strings.Repeat("漢字", 70), 120, 0, 35, 5},
		{"wrapped lines", strings.Repeat("a short line of text\n", 40), 150, 0, 45, 10},
		{"leading and trailing space", "\n\n   " + paragraphs(3, 100, "pad") + "  \n\n", 150, 0, 40, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := Document{ID: "docs/" + tt.name + ".md", Title: "T " + tt.name, Text: tt.text, Metadata: map[string]string{"lang": "x"}}
			b := parentChild(t, "rev1", tt.parentSize, tt.parentO, tt.childSize, tt.childO)
			res := b.Build(doc)
			if len(res.Parents) == 0 || len(res.Children) == 0 {
				t.Fatalf("got %d parents and %d children, want some of each", len(res.Parents), len(res.Children))
			}
			checkInvariants(t, doc, res)
			for _, p := range res.Parents {
				if n := utf8.RuneCountInString(p.Text); n > tt.parentSize {
					t.Errorf("parent of %d code points, size is %d", n, tt.parentSize)
				}
				if len(p.Children) == 0 {
					t.Errorf("parent %s has no children", p.ID)
				}
			}
			for _, c := range res.Children {
				if n := utf8.RuneCountInString(c.Text); n > tt.childSize {
					t.Errorf("child of %d code points, size is %d", n, tt.childSize)
				}
			}
			if tt.parentO == 0 {
				// Without parent overlap the parents hold every non-space
				// code point of the document once, in order.
				var all strings.Builder
				for _, p := range res.Parents {
					all.WriteString(p.Text)
				}
				if got, want := nonSpace(all.String()), nonSpace(doc.Text); got != want {
					t.Errorf("parents do not cover the document:\n got %q\nwant %q", got, want)
				}
			}
		})
	}
}

func TestBuildEmptyDocument(t *testing.T) {
	for _, text := range []string{"", "   ", "\n\n\t\n"} {
		for _, b := range []*Builder{
			parentChild(t, "r", 100, 0, 20, 0),
			{Strategy: chunking.SentenceWindow, Revision: "r", Child: recursive(t, 20, 0), Window: 2},
		} {
			res := b.Build(Document{ID: "empty", Text: text})
			if len(res.Parents) != 0 || len(res.Children) != 0 {
				t.Errorf("%s on %q: got %d parents, %d children, want none", b.Strategy, text, len(res.Parents), len(res.Children))
			}
		}
	}
}

// ids returns the parent and child ids of a result.
func ids(res Result) (parents, children []string) {
	for _, p := range res.Parents {
		parents = append(parents, p.ID)
	}
	for _, c := range res.Children {
		children = append(children, c.ID)
	}
	return parents, children
}

func TestIDsDeterministic(t *testing.T) {
	doc := Document{ID: "a.md", Title: "A", Text: paragraphs(5, 120, "same")}
	for _, strategy := range chunking.Strategies() {
		t.Run(string(strategy), func(t *testing.T) {
			mk := func() *Builder {
				b := parentChild(t, "rev", 200, 0, 50, 10)
				b.Strategy, b.Window = strategy, 1
				return b
			}
			b := mk()
			first, again, fresh := b.Build(doc), b.Build(doc), mk().Build(doc)
			if !reflect.DeepEqual(first, again) {
				t.Error("the same builder split the same document differently twice")
			}
			if !reflect.DeepEqual(first, fresh) {
				t.Error("two equal builders split the same document differently")
			}
		})
	}
}

func TestIDsChangeWithInput(t *testing.T) {
	// Three paragraphs of ~80 code points with parents of 100: each
	// paragraph is its own parent (two never fit together).
	text := paragraphs(3, 80, "word")
	base := Document{ID: "a.md", Text: text}
	builder := func(rev string) *Builder { return parentChild(t, rev, 100, 0, 30, 0) }
	ref := builder("rev1").Build(base)
	if len(ref.Parents) != 3 {
		t.Fatalf("got %d parents, want 3 (one per paragraph)", len(ref.Parents))
	}
	refP, refC := ids(ref)

	allDiffer := func(t *testing.T, what string, a, b []string) {
		t.Helper()
		seen := map[string]bool{}
		for _, id := range a {
			seen[id] = true
		}
		for _, id := range b {
			if seen[id] {
				t.Errorf("%s id %s unchanged", what, id)
			}
		}
	}
	for _, tt := range []struct {
		name string
		rev  string
		doc  Document
	}{
		{"revision", "rev2", base},
		{"document id", "rev1", Document{ID: "b.md", Text: text}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, c := ids(builder(tt.rev).Build(tt.doc))
			if len(p) != len(refP) || len(c) != len(refC) {
				t.Fatalf("split changed shape: %d/%d, was %d/%d", len(p), len(c), len(refP), len(refC))
			}
			allDiffer(t, "parent", refP, p)
			allDiffer(t, "child", refC, c)
		})
	}

	t.Run("text of the last paragraph", func(t *testing.T) {
		i := strings.LastIndex(text, "wordc")
		changed := Document{ID: base.ID, Text: text[:i] + "WORDC" + text[i+5:]}
		res := builder("rev1").Build(changed)
		p, _ := ids(res)
		if len(p) != 3 {
			t.Fatalf("got %d parents, want 3", len(p))
		}
		if p[0] != refP[0] || p[1] != refP[1] {
			t.Errorf("unchanged parents changed id: %v -> %v", refP[:2], p[:2])
		}
		if p[2] == refP[2] {
			t.Errorf("changed parent kept id %s", p[2])
		}
		for j, c := range res.Children {
			if strings.Contains(c.Text, "WORDC") && c.ID == refC[j] {
				t.Errorf("changed child %d kept id %s", j, c.ID)
			}
			if !strings.Contains(ref.Children[j].Text, "wordc") && c.ID != refC[j] {
				t.Errorf("unchanged child %d (%q) changed id", j, c.Text)
			}
		}
	})

	t.Run("title does not shift ids", func(t *testing.T) {
		p, c := ids(builder("rev1").Build(Document{ID: base.ID, Title: "New title", Text: text}))
		if !reflect.DeepEqual(p, refP) || !reflect.DeepEqual(c, refC) {
			t.Error("a title change changed ids")
		}
	})
}

func TestIdenticalTextsGetDistinctIDs(t *testing.T) {
	// The same paragraph three times: the ordinal keeps ids apart.
	text := strings.Repeat(paragraphs(1, 80, "same")+"\n\n", 3)
	res := parentChild(t, "r", 100, 0, 30, 0).Build(Document{ID: "d", Text: text})
	if len(res.Parents) != 3 {
		t.Fatalf("got %d parents, want 3", len(res.Parents))
	}
	if res.Parents[0].Text != res.Parents[1].Text {
		t.Fatalf("parents differ: %q, %q", res.Parents[0].Text, res.Parents[1].Text)
	}
	checkInvariants(t, Document{ID: "d", Text: text}, res)
}

func TestMakeIDFieldBoundaries(t *testing.T) {
	tests := []struct {
		name string
		a, b [5]string // kind, doc, revision, ordinal (as text), text
	}{
		{"doc|revision", [5]string{"p", "ab", "c", "0", "t"}, [5]string{"p", "a", "bc", "0", "t"}},
		{"revision|text", [5]string{"p", "d", "r1", "0", "x"}, [5]string{"p", "d", "r", "0", "1x"}},
		{"kind", [5]string{"p", "d", "r", "0", "x"}, [5]string{"c", "d", "r", "0", "x"}},
		{"ordinal", [5]string{"p", "d", "r", "0", "x"}, [5]string{"p", "d", "r", "1", "x"}},
	}
	ord := map[string]int{"0": 0, "1": 1}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := makeID(fieldhash.New(), tt.a[0], tt.a[1], tt.a[2], ord[tt.a[3]], tt.a[4])
			b := makeID(fieldhash.New(), tt.b[0], tt.b[1], tt.b[2], ord[tt.b[3]], tt.b[4])
			if a == b {
				t.Errorf("makeID collides: %v and %v both give %s", tt.a, tt.b, a)
			}
			if again := makeID(fieldhash.New(), tt.a[0], tt.a[1], tt.a[2], ord[tt.a[3]], tt.a[4]); again != a {
				t.Errorf("makeID not deterministic: %s then %s", a, again)
			}
		})
	}
}

func TestUnicodeOffsetsAreCodePoints(t *testing.T) {
	// Every word is unique, so strings.Index finds each child's own place.
	var words []string
	for i := range 60 {
		words = append(words, string(rune('α'+i%20))+"😀"+strings.Repeat("é", 1+i%3)+string(rune('A'+i/20))+"🎉")
	}
	text := strings.Join(words, " ")
	doc := Document{ID: "u", Text: text}
	res := parentChild(t, "r", 120, 0, 30, 0).Build(doc)
	checkInvariants(t, doc, res)
	var sawMultiByte bool
	for _, c := range res.Children {
		byteAt := strings.Index(text, c.Text)
		if byteAt < 0 {
			t.Fatalf("child %q not in text", c.Text)
		}
		want := utf8.RuneCountInString(text[:byteAt])
		if c.Start != want {
			t.Errorf("child %q: Start %d, want code-point offset %d (byte offset %d)", c.Text, c.Start, want, byteAt)
		}
		if byteAt != want {
			sawMultiByte = true
		}
	}
	if !sawMultiByte {
		t.Fatal("test text did not put multi-byte code points before any child")
	}
}

func TestSentenceWindow(t *testing.T) {
	sentences := []string{"Alpha one here.", "Bravo two there!", "Charlie three?", "Delta four now.", "Echo five ends."}
	unicodeSentences := []string{"Émile 😀 smiles.", "Über 🎉 feiert!", "Ñandú corre rápido?", "Øresund is wide.", "Ω ends it 🎈."}
	tests := []struct {
		name      string
		sentences []string
		sep       string
		window    int
	}{
		{"window 0", sentences, " ", 0},
		{"window 1", sentences, " ", 1},
		{"window 2", sentences, " ", 2},
		{"window 4 spans all", sentences, " ", 4},
		{"window 10 clipped", sentences, " ", 10},
		{"blank lines kept", sentences, "\n\n", 1},
		{"unicode window 1", unicodeSentences, "  ", 1},
		{"unicode window 2", unicodeSentences, " ", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := Document{ID: "s.txt", Title: "S", Text: "  " + strings.Join(tt.sentences, tt.sep) + "\n"}
			b := &Builder{Strategy: chunking.SentenceWindow, Revision: "r", Child: recursive(t, 100, 0), Window: tt.window}
			res := b.Build(doc)
			n := len(tt.sentences)
			if len(res.Parents) != n || len(res.Children) != n {
				t.Fatalf("got %d parents and %d children, want %d of each", len(res.Parents), len(res.Children), n)
			}
			checkInvariants(t, doc, res)
			for i, c := range res.Children {
				if c.Text != tt.sentences[i] {
					t.Errorf("child %d is %q, want the sentence %q", i, c.Text, tt.sentences[i])
				}
				lo, hi := max(0, i-tt.window), min(n-1, i+tt.window)
				want := strings.Join(tt.sentences[lo:hi+1], tt.sep)
				p := res.Parents[i]
				if c.ParentID != p.ID {
					t.Errorf("child %d belongs to %s, want its own window %s", i, c.ParentID, p.ID)
				}
				if p.Text != want {
					t.Errorf("window of sentence %d:\n got %q\nwant %q", i, p.Text, want)
				}
				// Symmetric unless clipped: as many sentences before as after.
				before, after := i-lo, hi-i
				if before != after && lo != 0 && hi != n-1 {
					t.Errorf("window of sentence %d is asymmetric: %d before, %d after", i, before, after)
				}
				if before > tt.window || after > tt.window {
					t.Errorf("window of sentence %d holds %d before and %d after, window is %d", i, before, after, tt.window)
				}
			}
		})
	}
}

func TestSentenceWindowNegativeWindowIsZero(t *testing.T) {
	doc := Document{ID: "d", Text: "One thing. Two things. Three things."}
	res := (&Builder{Strategy: chunking.SentenceWindow, Revision: "r", Child: recursive(t, 50, 0), Window: -1}).Build(doc)
	if len(res.Parents) != 3 {
		t.Fatalf("got %d parents, want 3", len(res.Parents))
	}
	for i, want := range []string{"One thing.", "Two things.", "Three things."} {
		if res.Parents[i].Text != want {
			t.Errorf("parent %d is %q, want %q", i, res.Parents[i].Text, want)
		}
	}
	checkInvariants(t, doc, res)
}

func TestSentenceWindowSplitsLongSentences(t *testing.T) {
	long := "This sentence is deliberately far longer than a single child may be so it splits."
	doc := Document{ID: "d", Text: "Short first. " + long + " Short last."}
	b := &Builder{Strategy: chunking.SentenceWindow, Revision: "r", Child: recursive(t, 25, 0), Window: 1}
	res := b.Build(doc)
	checkInvariants(t, doc, res)
	if len(res.Parents) != 3 {
		t.Fatalf("got %d parents, want one per sentence (3)", len(res.Parents))
	}
	mid := res.Parents[1]
	if mid.Text != doc.Text {
		t.Errorf("middle window is %q, want the whole document", mid.Text)
	}
	if len(mid.Children) < 2 {
		t.Fatalf("long sentence made %d children, want several", len(mid.Children))
	}
	var parts []string
	for _, c := range res.Children {
		if c.ParentID == mid.ID {
			if utf8.RuneCountInString(c.Text) > 25 {
				t.Errorf("child %q longer than 25", c.Text)
			}
			parts = append(parts, c.Text)
		}
	}
	if got := strings.Join(parts, " "); got != long {
		t.Errorf("children of the long sentence join to %q, want %q", got, long)
	}
}

// TestIDsDoNotChange pins two ids: a parentrag that made other ids for the
// same input would give every stored parent and child, and every Milvus
// row, a new id.
func TestIDsDoNotChange(t *testing.T) {
	for _, tc := range []struct {
		kind, doc, revision string
		ordinal             int
		text, want          string
	}{
		{"p", "guide.md", "rev1", 0, "Parents are sections.", "7c39fb8c0ed925cab3be"},
		{"c", "guide.md", "rev1", 3, "Children are sentences.", "2cc8cf51b3acb9080e78"},
	} {
		if got := makeID(fieldhash.New(), tc.kind, tc.doc, tc.revision, tc.ordinal, tc.text); got != tc.want {
			t.Errorf("makeID(fieldhash.New(), %q, %q, %q, %d, %q) = %s, want %s", tc.kind, tc.doc, tc.revision, tc.ordinal, tc.text, got, tc.want)
		}
	}
}

// TestParentsOfAPagedDocumentKnowTheirPages checks that each parent of a
// document with pages spans the pages its text lies on, that flat
// baselines keep them, and that a document without pages gives none.
func TestParentsOfAPagedDocumentKnowTheirPages(t *testing.T) {
	page := strings.Repeat("word ", 19) + "end." // 100 code points
	text := page + "\n" + page + "\n" + page
	doc := Document{ID: "m.pdf", Text: text, PageStarts: []int{0, 101, 202}}
	b := parentChild(t, "r", 150, 0, 40, 0)
	res := b.Build(doc)
	if len(res.Parents) < 2 {
		t.Fatalf("%d parents, want several", len(res.Parents))
	}
	for _, p := range res.Parents {
		want := PagesOf(doc.PageStarts, p.Start, p.Text)
		if p.Pages == nil || *p.Pages != *want || p.Pages.First < 1 || p.Pages.Last > 3 || p.Pages.First > p.Pages.Last {
			t.Errorf("parent at %d (%d code points) has pages %+v, want %+v", p.Start, len([]rune(p.Text)), p.Pages, want)
		}
	}
	if first, last := res.Parents[0].Pages, res.Parents[len(res.Parents)-1].Pages; first.First != 1 || last.Last != 3 {
		t.Errorf("parents span pages %d to %d, want 1 to 3", first.First, last.Last)
	}
	for _, p := range (FlatChildren{Builder: b}).Build(doc).Parents {
		if p.Pages == nil {
			t.Errorf("flat child parent %s has no pages", p.ID)
		}
	}
	doc.PageStarts = nil
	for _, p := range b.Build(doc).Parents {
		if p.Pages != nil {
			t.Errorf("parent of a document without pages has pages %+v", p.Pages)
		}
	}
}

func TestPagesOf(t *testing.T) {
	starts := []int{0, 10, 20}
	for _, tt := range []struct {
		start int
		text  string
		want  *Pages
	}{
		{0, "abc", &Pages{1, 1}},
		{8, "abcd", &Pages{1, 2}}, // 8..11
		{10, "", &Pages{2, 2}},    // an empty text lies where it starts
		{19, "ab", &Pages{2, 3}},  // 19..20
		{25, "ab", &Pages{3, 3}},  // past the last start: the last page
		{-1, "ab", nil},           // not located
	} {
		if got := PagesOf(starts, tt.start, tt.text); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("PagesOf(%d, %q) = %+v, want %+v", tt.start, tt.text, got, tt.want)
		}
	}
	if got := PagesOf(nil, 3, "x"); got != nil {
		t.Errorf("PagesOf without pages = %+v, want nil", got)
	}
	if got := (&Pages{3, 4}).Union(&Pages{1, 3}); *got != (Pages{1, 4}) {
		t.Errorf("Union = %+v, want 1-4", got)
	}
}
