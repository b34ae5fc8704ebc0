package split

import (
	"slices"
	"unicode/utf8"
)

// shortMerger merges chunks shorter than min into a neighbour, so that no chunk
// stands alone below min unless the whole text is shorter.
type shortMerger struct {
	runes  []rune
	min    int
	length LengthFunc
}

// merge returns the pieces with every piece shorter than min joined to a
// neighbour: first forward, into the next piece of its own section or of a
// section under its heading (a heading followed by a subsection), taking
// that piece's headings; then backward, into the previous piece (a short
// tail such as a closing code fence stays with the text it ends), under
// the headings both share. A short first piece that could join neither way
// joins the next one.
func (m shortMerger) merge(pieces []sectionPiece) []HeadedChunk {
	var forward []sectionPiece
	for _, p := range pieces {
		if n := len(forward); n > 0 && m.short(forward[n-1]) && joinsForward(forward[n-1], p) {
			forward[n-1] = m.join(forward[n-1], p, p.section, p.Headings)
			continue
		}
		forward = append(forward, p)
	}
	var out []sectionPiece
	for _, p := range forward {
		if n := len(out); n > 0 && m.short(p) {
			out[n-1] = m.join(out[n-1], p, out[n-1].section, commonPrefix(out[n-1].Headings, p.Headings))
			continue
		}
		out = append(out, p)
	}
	if len(out) > 1 && m.short(out[0]) {
		out = append([]sectionPiece{m.join(out[0], out[1], out[1].section, commonPrefix(out[0].Headings, out[1].Headings))}, out[2:]...)
	}
	chunks := make([]HeadedChunk, len(out))
	for i, p := range out {
		chunks[i] = p.HeadedChunk
	}
	return chunks
}

// short reports whether a piece is below the minimum.
func (m shortMerger) short(p sectionPiece) bool { return m.min > 0 && m.length(p.Text) < m.min }

// joinsForward reports whether a short piece a belongs with the piece b
// after it: b is in the same section, or in a section under a's headings.
func joinsForward(a, b sectionPiece) bool {
	return a.section == b.section || isPrefix(a.Headings, b.Headings)
}

// join returns one piece of the given section and headings spanning a and
// b in the text, from a's start to b's end (so the white space between
// them is kept). When either position is unknown the texts are joined with
// a blank line.
func (m shortMerger) join(a, b sectionPiece, section int, headings []string) sectionPiece {
	out := sectionPiece{section: section}
	out.Headings = headings
	out.Start = a.Start
	if a.Start >= 0 && b.Start >= 0 {
		out.Text = string(m.runes[a.Start : b.Start+utf8.RuneCountInString(b.Text)])
	} else {
		out.Text = a.Text + "\n\n" + b.Text
	}
	return out
}

// isPrefix reports whether p is a prefix of s.
func isPrefix(p, s []string) bool {
	return len(p) <= len(s) && slices.Equal(p, s[:len(p)])
}

// commonPrefix returns the longest shared prefix of a and b, as a new
// slice (nil when empty).
func commonPrefix(a, b []string) []string {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	if n == 0 {
		return nil
	}
	return append([]string(nil), a[:n]...)
}
