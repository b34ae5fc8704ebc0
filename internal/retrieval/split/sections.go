package split

import (
	"strings"
	"unicode/utf8"
)

// Heading is one header line of a Markdown text, as the Markdown header
// splitter recognises it: outside fenced code blocks, at one of its
// configured markers. Start is the code-point offset of the start of its
// line in the text; Path is the text of every header it falls under,
// outermost first, ending with its own.
type Heading struct {
	Start int
	Path  []string
}

// Headings returns the header lines of text in order, with the same
// header stack LangChain's split_text builds, so every heading path is the
// metadata split_text would give the lines under it.
func (m *MarkdownHeaderSplitter) Headings(text string) []Heading {
	var out []Heading
	scanner := headerScanner{m: m}
	start := 0
	for _, raw := range strings.Split(text, "\n") {
		if h, _, _ := scanner.scan(cleanLine(raw)); h != nil {
			path := make([]string, len(scanner.stack))
			for i, s := range scanner.stack {
				path[i] = s.data
			}
			out = append(out, Heading{Start: start, Path: path})
		}
		start += utf8.RuneCountInString(raw) + 1
	}
	return out
}

// MarkdownHeadings is headers_to_split_on for every ATX heading level, "#"
// to "######", named "Header 1" to "Header 6".
func MarkdownHeadings() []HeaderToSplitOn {
	out := make([]HeaderToSplitOn, 6)
	for i := range out {
		out[i] = HeaderToSplitOn{Marker: strings.Repeat("#", i+1), Name: "Header " + string(rune('1'+i))}
	}
	return out
}

// HeadedChunk is a chunk with the heading path it falls under, outermost
// heading first (empty before the first heading).
type HeadedChunk struct {
	Chunk
	Headings []string
}

// SectionOptions configures a Sectioner.
type SectionOptions struct {
	// Headers finds the section boundaries; nil treats the whole text as
	// one section, so only Within and MinChunkSize apply.
	Headers *MarkdownHeaderSplitter
	// Within splits a section longer than ChunkSize.
	Within TextSplitter
	// ChunkSize is the longest section kept whole, measured by Length.
	ChunkSize int
	// MinChunkSize is the shortest chunk that stands alone; shorter ones
	// merge into a neighbour. 0 merges nothing.
	MinChunkSize int
	// Length measures texts; nil counts code points.
	Length LengthFunc
}

// Sectioner splits a text into sections under their heading paths: each
// section runs from its heading line to the next heading, a section longer
// than ChunkSize is split by Within, and a chunk shorter than MinChunkSize
// merges into a neighbour. Chunks are spans of the text itself (their Text
// is text[Start:Start+len] in code points), in order and disjoint. A
// Sectioner is immutable and safe for concurrent use when Within is.
type Sectioner struct{ o SectionOptions }

// NewSectioner returns a Sectioner for o.
func NewSectioner(o SectionOptions) *Sectioner {
	if o.Length == nil {
		o.Length = CodePoints
	}
	return &Sectioner{o: o}
}

// Split returns the chunks of text without their heading paths.
func (s *Sectioner) Split(text string) []Chunk { return withoutHeadings(s.SplitHeaded(text)) }

// withoutHeadings returns the chunks of headed chunks.
func withoutHeadings(headed []HeadedChunk) []Chunk {
	out := make([]Chunk, len(headed))
	for i, h := range headed {
		out[i] = h.Chunk
	}
	return out
}

// SplitHeaded returns the chunks of text with their heading paths. No chunk
// is shorter than MinChunkSize unless the whole text is.
func (s *Sectioner) SplitHeaded(text string) []HeadedChunk {
	runes := []rune(text)
	var pieces []sectionPiece
	for i, sec := range s.sections(text, len(runes)) {
		pieces = append(pieces, s.splitSection(runes, sec, i)...)
	}
	m := shortMerger{runes: runes, min: s.o.MinChunkSize, length: s.o.Length}
	return m.merge(pieces)
}

// section is the span [start, end) of a text under one heading path.
type section struct {
	start, end int
	path       []string
}

// sections cuts the text at its headings; text before the first heading is
// a section with no path.
func (s *Sectioner) sections(text string, n int) []section {
	var hs []Heading
	if s.o.Headers != nil {
		hs = s.o.Headers.Headings(text)
	}
	out := []section{{start: 0, end: n}}
	for _, h := range hs {
		out[len(out)-1].end = h.Start
		out = append(out, section{start: h.Start, end: n, path: h.Path})
	}
	return out
}

// sectionPiece is a chunk of one section while small chunks are merged.
type sectionPiece struct {
	HeadedChunk
	section int
}

// splitSection returns the section stripped of surrounding white space,
// whole when it fits ChunkSize and split by Within otherwise; nothing for
// a blank section.
func (s *Sectioner) splitSection(runes []rune, sec section, ordinal int) []sectionPiece {
	start, end := sec.start, sec.end
	for start < end && IsPythonSpace(runes[start]) {
		start++
	}
	for end > start && IsPythonSpace(runes[end-1]) {
		end--
	}
	if start == end {
		return nil
	}
	text := string(runes[start:end])
	if s.o.Length(text) <= s.o.ChunkSize || s.o.Within == nil {
		return []sectionPiece{{HeadedChunk{Chunk{Text: text, Start: start}, sec.path}, ordinal}}
	}
	var out []sectionPiece
	for _, c := range keepClosingFences(runes[start:end], s.o.Within.Split(text)) {
		at := -1
		if c.Start >= 0 {
			at = start + c.Start
		}
		out = append(out, sectionPiece{HeadedChunk{Chunk{Text: c.Text, Start: at}, sec.path}, ordinal})
	}
	return out
}

// keepClosingFences moves a code fence that closes a block from the start
// of a chunk to the end of the chunk before it, where its block is, so no
// chunk begins with the end of a code block. A chunk left blank is
// dropped. Chunks whose position is unknown are kept as they are.
func keepClosingFences(runes []rune, chunks []Chunk) []Chunk {
	out := make([]Chunk, 0, len(chunks))
	for _, c := range chunks {
		prev := len(out) - 1
		if prev < 0 || c.Start < 0 || out[prev].Start < 0 || !isFence(firstLineOf(c.Text)) || !insideFence(runes[:c.Start]) {
			out = append(out, c)
			continue
		}
		lineEnd := c.Start + utf8.RuneCountInString(firstLineOf(c.Text))
		out[prev].Text = string(runes[out[prev].Start:lineEnd])
		rest := lineEnd
		for rest < c.Start+utf8.RuneCountInString(c.Text) && IsPythonSpace(runes[rest]) {
			rest++
		}
		if tail := string(runes[rest : c.Start+utf8.RuneCountInString(c.Text)]); tail != "" {
			out = append(out, Chunk{Text: tail, Start: rest})
		}
	}
	return out
}

// firstLineOf returns s up to its first line break.
func firstLineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// isFence reports whether a line opens or closes a fenced code block.
func isFence(line string) bool {
	line = TrimPythonSpace(line)
	return strings.HasPrefix(line, "```") || strings.HasPrefix(line, "~~~")
}

// insideFence reports whether the end of text is inside a fenced code
// block: an odd number of its lines are fences.
func insideFence(text []rune) bool {
	fences := 0
	for _, line := range strings.Split(string(text), "\n") {
		if isFence(line) {
			fences++
		}
	}
	return fences%2 == 1
}
