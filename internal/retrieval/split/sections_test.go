package split

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// newTestSectioner cuts at every heading level and splits long sections
// with LangChain's default recursive splitter.
func newTestSectioner(t *testing.T, size, minSize int) *Sectioner {
	t.Helper()
	within, err := NewRecursive(DefaultOptions(size, 0))
	if err != nil {
		t.Fatal(err)
	}
	return NewSectioner(SectionOptions{
		Headers:      NewMarkdownHeaderSplitter(MarkdownHeaderOptions{Headers: MarkdownHeadings()}),
		Within:       within,
		ChunkSize:    size,
		MinChunkSize: minSize,
	})
}

// checkSpans fails unless every chunk is the text at its offset, in order
// and without overlap.
func checkSpans(t *testing.T, text string, chunks []HeadedChunk) {
	t.Helper()
	runes := []rune(text)
	end := 0
	for i, c := range chunks {
		n := utf8.RuneCountInString(c.Text)
		if c.Start < end || c.Start+n > len(runes) || string(runes[c.Start:c.Start+n]) != c.Text {
			t.Errorf("chunk %d (start %d) is not the text at its offset: %q", i, c.Start, c.Text)
			continue
		}
		end = c.Start + n
	}
}

func TestSectionerKeepsEachSectionWithItsHeadingPath(t *testing.T) {
	text := "Intro line.\n\n# Guide\n\nGuide text.\n\n## Install\n\nRun the installer.\n\n```sh\n# not a heading\nmake\n```\n\n## Use\n\nCall it.\n"
	got := newTestSectioner(t, 1000, 0).SplitHeaded(text)
	want := []HeadedChunk{
		{Chunk{Text: "Intro line.", Start: 0}, nil},
		{Chunk{Text: "# Guide\n\nGuide text.", Start: 13}, []string{"Guide"}},
		{Chunk{Text: "## Install\n\nRun the installer.\n\n```sh\n# not a heading\nmake\n```", Start: 35}, []string{"Guide", "Install"}},
		{Chunk{Text: "## Use\n\nCall it.", Start: 99}, []string{"Guide", "Use"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SplitHeaded =\n%#v\nwant\n%#v", got, want)
	}
	checkSpans(t, text, got)
}

func TestSectionerMergesShortPiecesIntoTheirNeighbour(t *testing.T) {
	long := strings.Repeat("word ", 30) // 150 code points
	text := "# Title\n\n## Empty heading\n\n### Child\n\n" + long + "\n\n" + long + "\n\n```\ncode\n```\n\n## Short\n\nTiny.\n"
	s := newTestSectioner(t, 200, 60)
	got := s.SplitHeaded(text)
	checkSpans(t, text, got)
	for i, c := range got {
		if n := utf8.RuneCountInString(c.Text); n < 60 {
			t.Errorf("chunk %d has %d code points, under the minimum 60: %q", i, n, c.Text)
		}
	}
	if len(got) == 0 || !strings.HasPrefix(got[0].Text, "# Title\n\n## Empty heading\n\n### Child") {
		t.Fatalf("the headings with no text of their own did not join the section under them: %+v", got)
	}
	if want := []string{"Title", "Empty heading", "Child"}; !reflect.DeepEqual(got[0].Headings, want) {
		t.Errorf("first chunk headings = %q, want those of the text it holds, %q", got[0].Headings, want)
	}
	last := got[len(got)-1]
	if !strings.HasSuffix(last.Text, "```\ncode\n```\n\n## Short\n\nTiny.") {
		t.Errorf("the short tail and the short last section did not join the text before them: %q", last.Text)
	}
	if !reflect.DeepEqual(last.Headings, []string{"Title"}) {
		t.Errorf("last chunk spans two sections, headings = %q, want their shared [Title]", last.Headings)
	}
	for _, c := range got {
		if strings.HasPrefix(c.Text, "```") {
			t.Errorf("a chunk starts with the end of a code block: %q", c.Text)
		}
	}
}

func TestSectionerKeepsAShortDocumentWhole(t *testing.T) {
	got := newTestSectioner(t, 200, 60).SplitHeaded("## A\n\nshort")
	if len(got) != 1 || got[0].Text != "## A\n\nshort" {
		t.Errorf("SplitHeaded = %+v, want the document as one chunk", got)
	}
	if got := newTestSectioner(t, 200, 60).SplitHeaded(" \n\n "); len(got) != 0 {
		t.Errorf("blank text gave %+v", got)
	}
}

func TestHeadingsMatchSplitTextMetadata(t *testing.T) {
	text := "# A\nx\n## B\ny\n```\n## not\n```\n### C\nz\n## D\nw"
	m := NewMarkdownHeaderSplitter(MarkdownHeaderOptions{Headers: MarkdownHeadings(), ReturnEachLine: true})
	hs := m.Headings(text)
	var paths [][]string
	for _, h := range hs {
		paths = append(paths, h.Path)
	}
	want := [][]string{{"A"}, {"A", "B"}, {"A", "B", "C"}, {"A", "D"}}
	if !reflect.DeepEqual(paths, want) {
		t.Errorf("heading paths = %q, want %q", paths, want)
	}
	if starts := []int{hs[0].Start, hs[1].Start, hs[2].Start, hs[3].Start}; !reflect.DeepEqual(starts, []int{0, 6, 28, 36}) {
		t.Errorf("heading starts = %v", starts)
	}
}

func TestSectionerKeepsAClosingFenceWithItsCodeBlock(t *testing.T) {
	code := "```yaml\n" + strings.Repeat("key: value\n", 12) + "```"
	text := "## Example\n\nIntro text.\n\n" + code + "\n\nThe text after the block explains it in a few more words.\n"
	s := NewSectioner(SectionOptions{Within: mustMarkdownRecursive(t, 120), ChunkSize: 120,
		Headers: NewMarkdownHeaderSplitter(MarkdownHeaderOptions{Headers: MarkdownHeadings()})})
	got := s.SplitHeaded(text)
	checkSpans(t, text, got)
	for i, c := range got {
		if i > 0 && strings.HasPrefix(c.Text, "```\n") || c.Text == "```" {
			t.Errorf("chunk %d starts with the closing fence of a code block: %q", i, c.Text)
		}
	}
	var closed bool
	for _, c := range got {
		closed = closed || strings.HasSuffix(c.Text, "key: value\n```")
	}
	if !closed {
		t.Errorf("no chunk ends with the code block and its closing fence: %+v", got)
	}
}

// mustMarkdownRecursive returns LangChain's recursive splitter with the
// Markdown separators.
func mustMarkdownRecursive(t *testing.T, size int) *Recursive {
	t.Helper()
	seps, regex, err := Separators(PresetMarkdown)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions(size, 0)
	o.Separators, o.IsSeparatorRegex = seps, regex
	r, err := NewRecursive(o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
