package split

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/parentrag/parentrag/internal/utf8word"
)

// KeepSeparator says whether a splitter keeps the separators it splits at,
// and where (LangChain's keep_separator).
type KeepSeparator int

const (
	// KeepNone drops separators (keep_separator=False). Merged pieces are
	// then joined with the configured separator string, for a regular
	// expression its pattern text, as LangChain does.
	KeepNone KeepSeparator = iota
	// KeepStart keeps each separator at the start of the piece that
	// follows it (keep_separator=True or "start").
	KeepStart
	// KeepEnd keeps each separator at the end of the piece that precedes
	// it (keep_separator="end").
	KeepEnd
)

// String returns the LangChain spelling of k: "false", "start" or "end".
func (k KeepSeparator) String() string {
	switch k {
	case KeepNone:
		return "false"
	case KeepStart:
		return "start"
	case KeepEnd:
		return "end"
	}
	return fmt.Sprintf("KeepSeparator(%d)", int(k))
}

// base holds what LangChain's TextSplitter holds: sizes, separator
// keeping, stripping and the length function.
type base struct {
	chunkSize    int
	chunkOverlap int
	keep         KeepSeparator
	strip        bool
	length       LengthFunc // nil: code points, computed on the fast path
	warn         func(string)
	pool         sync.Pool // *splitState
}

// newBase validates the sizes with LangChain's messages, in its order.
func newBase(chunkSize, chunkOverlap int, keep KeepSeparator, strip bool, length LengthFunc, warn func(string)) (*base, error) {
	if chunkSize <= 0 {
		return nil, fmt.Errorf("chunk_size must be > 0, got %d", chunkSize)
	}
	if chunkOverlap < 0 {
		return nil, fmt.Errorf("chunk_overlap must be >= 0, got %d", chunkOverlap)
	}
	if chunkOverlap > chunkSize {
		return nil, fmt.Errorf("Got a larger chunk overlap (%d) than chunk size (%d), should be smaller.", chunkOverlap, chunkSize) //nolint:staticcheck // LangChain's exact message.
	}
	if keep < KeepNone || keep > KeepEnd {
		return nil, fmt.Errorf("split: invalid KeepSeparator %d", int(keep))
	}
	if isCodePoints(length) {
		length = nil
	}
	return &base{chunkSize: chunkSize, chunkOverlap: chunkOverlap, keep: keep, strip: strip, length: length, warn: warn}, nil
}

// splitState is the scratch space of one split call.
type splitState struct {
	ascii bool      // the text being split is ASCII: lengths are byte lengths
	first int       // first match of a literal separator, from find
	locs  [][]int   // matches (with groups) of a regular-expression separator, from find
	pairs []int     // [start, end) pairs of matches without groups, from find
	bufs  [][]piece // pieces, one buffer per recursion depth
	wins  [][]piece // merge windows, one per recursion depth
	runes []rune    // sepPython scratch
	offs  []int     // sepPython scratch
	out   []string  // chunks
}

func (b *base) getState(text string) *splitState {
	st, _ := b.pool.Get().(*splitState)
	if st == nil {
		st = &splitState{}
	}
	st.ascii = utf8word.IsASCII(text)
	return st
}

// putState returns st to the pool. Its buffers still reference the last
// text until reused; sync.Pool drops idle states at garbage collection.
func (b *base) putState(st *splitState) {
	st.locs = nil
	if cap(st.out) > 1<<14 {
		st.out = nil
	}
	b.pool.Put(st)
}

// buf returns the empty piece buffer of recursion depth d.
func (st *splitState) buf(d int) []piece {
	for len(st.bufs) <= d {
		st.bufs = append(st.bufs, nil)
	}
	return st.bufs[d][:0]
}

// win returns the empty merge window buffer of recursion depth d.
func (st *splitState) win(d int) []piece {
	for len(st.wins) <= d {
		st.wins = append(st.wins, nil)
	}
	return st.wins[d][:0]
}

// lenOf measures s with the splitter's length function.
func (b *base) lenOf(s string, ascii bool) int {
	if b.length != nil {
		return b.length(s)
	}
	if ascii {
		return len(s)
	}
	return utf8word.RuneCount(s)
}

// measure sets the length of every piece.
func (b *base) measure(ps []piece, ascii bool) {
	for i := range ps {
		ps[i].n = b.lenOf(ps[i].s, ascii)
	}
}

// mergeSeparator returns the string LangChain joins merged pieces with, and
// its length: "" when separators are kept, else the configured separator
// (for a regular expression, its pattern text).
func (b *base) mergeSeparator(raw string) (string, int) {
	if b.keep != KeepNone {
		raw = ""
	}
	if b.length == nil {
		return raw, utf8.RuneCountInString(raw)
	}
	return raw, b.length(raw)
}

// merge is LangChain's _merge_splits over pieces of text: it packs
// consecutive pieces joined by sep into chunks of at most chunkSize,
// starting each new chunk with the trailing pieces of the previous one that
// fit in chunkOverlap. A chunk is stripped when the splitter strips, and
// dropped when empty.
func (b *base) merge(text string, ps []piece, sep string, sepLen int, out []string) []string {
	total := 0
	start := 0
	for k := range ps {
		l := ps[k].n
		if cnt := k - start; total+l+sepIf(cnt > 0, sepLen) > b.chunkSize {
			if total > b.chunkSize && b.warn != nil {
				b.warn(fmt.Sprintf("Created a chunk of size %d, which is longer than the specified %d", total, b.chunkSize))
			}
			if cnt > 0 {
				if doc, ok := b.join(text, ps[start:k], sep); ok {
					out = append(out, doc)
				}
				for cnt > 0 && (total > b.chunkOverlap || (total+l+sepIf(cnt > 0, sepLen) > b.chunkSize && total > 0)) {
					total -= ps[start].n + sepIf(cnt > 1, sepLen)
					start++
					cnt--
				}
			}
		}
		total += l + sepIf(k-start+1 > 1, sepLen)
	}
	if doc, ok := b.join(text, ps[start:], sep); ok {
		out = append(out, doc)
	}
	return out
}

// merger is merge fed one piece at a time: it holds only the pieces of the
// chunk being built (win[start:]), so a long run of pieces is merged in
// memory proportional to a chunk. Pieces pushed must lie in text.
type merger struct {
	*base
	text   string
	sep    string
	sepLen int
	win    []piece
	start  int
	total  int
}

// push is one step of merge's loop: it appends to out the chunk that p
// does not fit in, if any, and adds p to the window.
func (m *merger) push(p piece, out []string) []string {
	l := p.n
	cnt := len(m.win) - m.start
	if m.total+l+sepIf(cnt > 0, m.sepLen) > m.chunkSize {
		if m.total > m.chunkSize && m.warn != nil {
			m.warn(fmt.Sprintf("Created a chunk of size %d, which is longer than the specified %d", m.total, m.chunkSize))
		}
		if cnt > 0 {
			if doc, ok := m.join(m.text, m.win[m.start:], m.sep); ok {
				out = append(out, doc)
			}
			for cnt > 0 && (m.total > m.chunkOverlap || (m.total+l+sepIf(cnt > 0, m.sepLen) > m.chunkSize && m.total > 0)) {
				m.total -= m.win[m.start].n + sepIf(cnt > 1, m.sepLen)
				m.start++
				cnt--
			}
		}
	}
	m.total += l + sepIf(cnt+1 > 1, m.sepLen)
	if len(m.win) == cap(m.win) && m.start > 0 {
		m.win = m.win[:copy(m.win, m.win[m.start:])]
		m.start = 0
	}
	m.win = append(m.win, p)
	return out
}

// flush appends the last chunk of the run to out and empties the window.
func (m *merger) flush(out []string) []string {
	if doc, ok := m.join(m.text, m.win[m.start:], m.sep); ok {
		out = append(out, doc)
	}
	m.win, m.start, m.total = m.win[:0], 0, 0
	return out
}

func sepIf(cond bool, n int) int {
	if cond {
		return n
	}
	return 0
}

// join is LangChain's _join_docs: sep.join(pieces), stripped when the
// splitter strips; ok is false when the result is empty. When the pieces
// lie in text one separator apart the result is a substring of text.
func (b *base) join(text string, ps []piece, sep string) (string, bool) {
	if len(ps) == 0 {
		return "", false
	}
	contiguous := ps[0].off >= 0
	for i := 1; contiguous && i < len(ps); i++ {
		end := ps[i-1].off + len(ps[i-1].s)
		contiguous = ps[i].off >= 0 && ps[i].off == end+len(sep) && text[end:ps[i].off] == sep
	}
	var s string
	if contiguous {
		last := ps[len(ps)-1]
		s = text[ps[0].off : last.off+len(last.s)]
	} else {
		n := len(sep) * (len(ps) - 1)
		for _, p := range ps {
			n += len(p.s)
		}
		var sb strings.Builder
		sb.Grow(n)
		for i, p := range ps {
			if i > 0 {
				sb.WriteString(sep)
			}
			sb.WriteString(p.s)
		}
		s = sb.String()
	}
	if b.strip {
		s = TrimPythonSpace(s)
	}
	return s, s != ""
}

// mergeStrings is the exported _merge_splits over arbitrary strings.
func (b *base) mergeStrings(splits []string, separator string) []string {
	ps := make([]piece, len(splits))
	for i, s := range splits {
		ps[i] = piece{s: s, off: -1, n: b.lenOf(s, false)}
	}
	sepLen := utf8.RuneCountInString(separator)
	if b.length != nil {
		sepLen = b.length(separator)
	}
	return b.merge("", ps, separator, sepLen, nil)
}

// locate gives chunks LangChain's start_index, as create_documents computes
// it: each chunk is searched with text.find(chunk, max(0, offset)) where
// offset is the previous chunk's start_index plus its length in code points
// minus chunk_overlap (whatever unit the length function counts). A chunk
// that is not found gets -1, and the next search starts from
// -1 + len(previous) - chunk_overlap.
func (b *base) locate(text string, chunks []string, ascii bool) []Chunk {
	if len(chunks) == 0 {
		return nil
	}
	res := make([]Chunk, len(chunks))
	cur := cpCursor{text: text, ascii: ascii}
	index, prevLen := 0, 0
	for i, c := range chunks {
		offset := max(0, index+prevLen-b.chunkOverlap)
		index = -1
		if ascii {
			prevLen = len(c)
		} else {
			prevLen = utf8word.RuneCount(c)
		}
		if bo, ok := cur.byteAt(offset); ok {
			if k := strings.Index(text[bo:], c); k >= 0 {
				index = cur.cpAt(bo + k)
				// The chunk ends prevLen code points further: start the
				// next search from there.
				cur.b, cur.cp = bo+k+len(c), index+prevLen
			}
		}
		res[i] = Chunk{Text: c, Start: index}
	}
	return res
}

// cpCursor converts between code-point and byte offsets of one text,
// walking from the last position it converted.
type cpCursor struct {
	text  string
	ascii bool
	b, cp int // a byte offset and the code-point offset it has
}

// byteAt returns the byte offset of code point cp; ok is false past the end.
func (c *cpCursor) byteAt(cp int) (int, bool) {
	if c.ascii {
		return cp, cp <= len(c.text)
	}
	if cp < c.cp-cp { // closer to the start than to the cursor
		c.b, c.cp = 0, 0
	}
	for c.cp > cp {
		if c.b == 0 {
			// Only reachable on invalid UTF-8, where a chunk can be found
			// inside a multi-byte sequence and counts drift.
			c.cp = 0
			break
		}
		_, w := utf8.DecodeLastRuneInString(c.text[:c.b])
		c.b -= w
		c.cp--
	}
	for c.cp < cp {
		if c.b >= len(c.text) {
			return 0, false
		}
		w := 1
		if c.text[c.b] >= utf8.RuneSelf {
			_, w = utf8.DecodeRuneInString(c.text[c.b:])
		}
		c.b += w
		c.cp++
	}
	return c.b, true
}

// cpAt returns the code-point offset of byte offset b, b >= the cursor's.
func (c *cpCursor) cpAt(b int) int {
	if c.ascii {
		return b
	}
	if b < c.b {
		c.b, c.cp = 0, 0
	}
	c.cp += utf8word.RuneCount(c.text[c.b:b])
	c.b = b
	return c.cp
}
