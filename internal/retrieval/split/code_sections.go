package split

import (
	"fmt"
	"slices"
	"unicode/utf8"
)

// CodeOptions configures a CodeSectioner.
type CodeOptions struct {
	// Language is the source's language; it must be code (IsCode).
	Language Language
	// Within splits a definition longer than ChunkSize that has no
	// definitions inside it to cut at.
	Within TextSplitter
	// ChunkSize is the longest definition kept whole, measured by Length.
	ChunkSize int
	// MinChunkSize is the shortest section that stands alone: shorter
	// neighbours are packed together, or join the definition after (or
	// before) them, while the result fits ChunkSize. 0 packs nothing.
	MinChunkSize int
	// Length measures texts; nil counts code points.
	Length LengthFunc
}

// maxCodeNesting is how many levels of definitions a CodeSectioner cuts
// through (a namespace, its class, the class's method) before it leaves a
// section that is still too long to Within.
const maxCodeNesting = 4

// CodeSectioner splits source code into its top-level definitions: each
// function, type or class (with its methods) is a section under its name.
// A definition longer than ChunkSize is cut at the definitions inside it
// (a class at its methods, under ["class Foo", "def bar"]); one that has
// none is split by Within. Short neighbours are packed (MinChunkSize).
// Comments and decorators right above a definition belong to it; the lines
// before the first definition (package clause, imports) are a section of
// their own. Chunks are spans of the text in order; they are disjoint. A
// CodeSectioner is immutable and safe for concurrent use when Within is;
// its time is linear in the length of the text for each level of nesting.
type CodeSectioner struct {
	o   CodeOptions
	syn *codeSyntax
}

// NewCodeSectioner returns a CodeSectioner for o, or an error when its
// language is not code.
func NewCodeSectioner(o CodeOptions) (*CodeSectioner, error) {
	syn, ok := syntaxes[o.Language]
	if !ok {
		return nil, fmt.Errorf("split: %q is not a programming language with definitions", o.Language)
	}
	if o.Length == nil {
		o.Length = CodePoints
	}
	return &CodeSectioner{o: o, syn: syn}, nil
}

// Split returns the sections of text without their definition names.
func (s *CodeSectioner) Split(text string) []Chunk { return withoutHeadings(s.SplitHeaded(text)) }

// SplitHeaded returns the sections of text, each with the names of the
// definitions it falls under, outermost first.
func (s *CodeSectioner) SplitHeaded(text string) []HeadedChunk {
	var pieces []codePiece
	if len(text) > maxCodeText {
		pieces = s.within(text, 0, nil)
	} else {
		f := &codeFinder{text: text, lines: scanLines(text, s.syn), syn: s.syn}
		pieces = s.section(f, 0, len(f.lines), -1, nil, 0)
	}
	out := make([]HeadedChunk, len(pieces))
	for i, p := range pieces {
		out[i] = p.HeadedChunk
	}
	return out
}

// codePiece is a section while short ones are packed.
type codePiece struct {
	HeadedChunk
	end   int  // code-point offset of the end of Text
	whole bool // a whole unit (or units), which may be packed
	named bool // it is one definition, named in Headings
	outer int  // how many names of Headings are of definitions around it
	n     int  // the length of Text, by Length
}

// section cuts lines [from, to), whose enclosing definitions are path, at
// its statements deeper than above, and packs short ones.
func (s *CodeSectioner) section(f *codeFinder, from, to, above int, path []string, nesting int) []codePiece {
	units := f.units(from, to, above)
	if len(units) == 0 {
		units = []codeUnit{{first: from, last: to, head: -1}}
	}
	var out []codePiece
	for _, u := range units {
		out = append(out, s.unitPieces(f, u, path, nesting)...)
	}
	return s.pack(f, out)
}

// unitPieces returns a unit whole when it fits ChunkSize, else cut at the
// definitions inside it, else split by Within; nothing for a blank unit.
func (s *CodeSectioner) unitPieces(f *codeFinder, u codeUnit, path []string, nesting int) []codePiece {
	start, end := f.trimmedSpan(u.first, u.last)
	if start >= end {
		return nil
	}
	text := f.spanText(start, end)
	p := path
	if u.name != "" {
		p = append(slices.Clip(path), u.name)
	}
	if n := s.o.Length(text); n <= s.o.ChunkSize {
		return []codePiece{{HeadedChunk: HeadedChunk{Chunk{Text: text, Start: start}, p}, end: end, whole: true, named: u.name != "", outer: len(path), n: n}}
	}
	if u.head >= 0 && nesting < maxCodeNesting && len(f.units(u.head+1, u.last, f.level(u.head))) > 0 {
		inner := s.section(f, u.first, u.last, f.level(u.head), p, nesting+1)
		for i := range inner {
			inner[i].whole = false // pieces of a definition join nothing outside it
		}
		return inner
	}
	return s.within(text, start, p)
}

// within splits a span too long to keep whole with the Within splitter.
func (s *CodeSectioner) within(text string, start int, path []string) []codePiece {
	if s.o.Within == nil {
		return []codePiece{{HeadedChunk: HeadedChunk{Chunk{Text: text, Start: start}, path}, end: start + utf8.RuneCountInString(text), outer: len(path), n: s.o.Length(text)}}
	}
	var out []codePiece
	for _, c := range s.o.Within.Split(text) {
		at, end := -1, -1
		if c.Start >= 0 {
			at = start + c.Start
			end = at + utf8.RuneCountInString(c.Text)
		}
		out = append(out, codePiece{HeadedChunk: HeadedChunk{Chunk{Text: c.Text, Start: at}, path}, end: end, outer: len(path), n: s.o.Length(c.Text)})
	}
	return out
}

// pack joins neighbouring whole pieces while the result fits ChunkSize:
// first runs of statements that define nothing (imports, the statements
// of a long function) and runs of short pieces, then a piece that is still
// short joins the whole piece after it, or else the one before it. A
// definition that is not short stays a piece of its own.
func (s *CodeSectioner) pack(f *codeFinder, pieces []codePiece) []codePiece {
	var out []codePiece
	for _, p := range pieces {
		if n := len(out); n > 0 && out[n-1].whole && p.whole && s.packs(out[n-1], p) {
			if joined, ok := s.join(f, out[n-1], p); ok {
				out[n-1] = joined
				continue
			}
		}
		out = append(out, p)
	}
	var final []codePiece
	for i := 0; i < len(out); i++ {
		p := out[i]
		if s.short(p) && p.whole && i+1 < len(out) && joinsShort(p, out[i+1]) {
			if joined, ok := s.join(f, p, out[i+1]); ok {
				out[i+1] = joined
				continue
			}
		}
		if n := len(final); n > 0 && s.short(p) && p.whole && joinsShort(p, final[n-1]) {
			if joined, ok := s.join(f, final[n-1], p); ok {
				final[n-1] = joined
				continue
			}
		}
		final = append(final, p)
	}
	return final
}

// packs reports whether two neighbouring whole pieces are packed together:
// both define nothing, or both are short.
func (s *CodeSectioner) packs(a, b codePiece) bool {
	return (!a.named && !b.named) || (s.short(a) && s.short(b))
}

// joinsShort reports whether the short whole piece p may join q: q is
// whole, or a piece of the definition p is in (the statements before the
// return of a long function), not of another one.
func joinsShort(p, q codePiece) bool {
	return q.Start >= 0 && q.end >= 0 && (q.whole || (q.outer == p.outer && isPrefix(p.Headings[:p.outer], q.Headings)))
}

// short reports whether a piece is below MinChunkSize.
func (s *CodeSectioner) short(p codePiece) bool {
	return s.o.MinChunkSize > 0 && p.n < s.o.MinChunkSize
}

// join returns the span from a's start to b's end when it fits ChunkSize.
// Its length is the sum of theirs and of the white space between them, as
// LangChain's merge sums the lengths of the pieces it joins (exact for
// code points; tokens may differ by one at each junction), so joining
// costs no measuring of long texts. A short piece joins under the name of
// the longer one; two short ones (or two long ones) fall under the
// definition of whichever is one when the other is not, and under what
// both share otherwise.
func (s *CodeSectioner) join(f *codeFinder, a, b codePiece) (codePiece, bool) {
	n := a.n + b.n
	if n <= s.o.ChunkSize {
		n += s.o.Length(f.spanText(a.end, b.Start))
	}
	if n > s.o.ChunkSize {
		return codePiece{}, false
	}
	out := codePiece{
		HeadedChunk: HeadedChunk{Chunk: Chunk{Text: f.spanText(a.Start, b.end), Start: a.Start}},
		end:         b.end, whole: a.whole && b.whole, outer: min(a.outer, b.outer), n: n,
	}
	switch shortA, shortB := s.short(a), s.short(b); {
	case shortA && !shortB, b.named && !a.named:
		out.Headings, out.named = b.Headings, b.named
	case shortB && !shortA, a.named && !b.named:
		out.Headings, out.named = a.Headings, a.named
	default:
		out.Headings = commonPrefix(a.Headings, b.Headings)
	}
	return out, true
}
