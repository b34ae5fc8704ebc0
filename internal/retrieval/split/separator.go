package split

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// sepKind is how a compiled separator finds its matches.
type sepKind uint8

const (
	// sepChars is the empty separator: Python's list(text), one piece per
	// code point.
	sepChars sepKind = iota
	// sepLiteral is a fixed string, searched with strings.Index.
	sepLiteral
	// sepSimple is a regular expression made of runs of single bytes
	// (simplePattern), matched without a regexp engine.
	sepSimple
	// sepRE2 is a regular expression Go's regexp matches exactly as
	// Python's re does: no lookaround, no $, \b, \d, \w or \s, and it
	// cannot match the empty string.
	sepRE2
	// sepPython is any other regular expression, run by regexp2 (a
	// backtracking engine) with Python's re.split rules for empty matches.
	sepPython
)

// separator is one compiled separator of a splitter.
type separator struct {
	raw    string // as configured; the merge separator when KeepNone
	kind   sepKind
	lit    string          // sepLiteral
	simple *simplePattern  // sepSimple
	re     *regexp.Regexp  // sepRE2
	py     *regexp2.Regexp // sepPython
	groups int             // capturing groups of the pattern (sepRE2, sepPython)

	// mergeSep joins merged pieces split at this separator in a Recursive
	// splitter; mergeLen is its length.
	mergeSep string
	mergeLen int
}

// compileSeparator compiles s once. A literal separator (isRegex false, or
// a regular expression without metacharacters) never touches a regexp
// engine.
func compileSeparator(s string, isRegex bool) (*separator, error) {
	sp := &separator{raw: s}
	if s == "" {
		sp.kind = sepChars
		return sp, nil
	}
	if !isRegex {
		sp.kind = sepLiteral
		sp.lit = s
		return sp, nil
	}
	if !needsPythonEngine(s) {
		if t, err := syntax.Parse(s, syntax.Perl); err == nil {
			t = t.Simplify()
			if t.Op == syntax.OpLiteral && t.Flags&syntax.FoldCase == 0 && len(t.Rune) > 0 {
				sp.kind = sepLiteral
				sp.lit = string(t.Rune)
				return sp, nil
			}
		}
		if p, ok := parseSimple(s); ok {
			sp.kind = sepSimple
			sp.simple = p
			return sp, nil
		}
		if re, err := regexp.Compile(s); err == nil && !re.MatchString("") {
			sp.kind = sepRE2
			sp.re = re
			sp.groups = re.NumSubexp()
			return sp, nil
		}
	}
	py, err := regexp2.Compile(pythonToNET(s), regexp2.OptionMaintainCaptureOrder(), regexp2.OptionMaxBacktrackingStackSize(-1))
	if err != nil {
		return nil, fmt.Errorf("split: invalid separator regex %q: %w", s, err)
	}
	sp.kind = sepPython
	sp.py = py
	sp.groups = len(py.GetGroupNumbers()) - 1
	return sp, nil
}

// needsPythonEngine reports whether pattern p uses a construct on which Go's
// regexp differs from Python's re or that it lacks: lookaround,
// backreferences, conditionals, $ (Python's also matches before a final
// newline), \b \B \d \D \w \W \s \S \Z (Unicode-aware in Python, ASCII in
// Go), POSIX-looking classes and {,n}.
func needsPythonEngine(p string) bool {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if i+1 < len(p) {
				c := p[i+1]
				if strings.IndexByte("dDwWsSbBZ", c) >= 0 || (c >= '0' && c <= '9') {
					return true
				}
				i++
			}
		case '$':
			return true
		case '(':
			for _, pre := range [...]string{"(?=", "(?!", "(?<=", "(?<!", "(?P=", "(?(", "(?#", "(?>"} {
				if strings.HasPrefix(p[i:], pre) {
					return true
				}
			}
		case '[':
			if i+1 < len(p) && p[i+1] == ':' {
				return true
			}
		case '{':
			if i+1 < len(p) && p[i+1] == ',' {
				return true
			}
		}
	}
	return false
}

// pySpaceClass is the body of a character class matching what Python's \s
// matches in a str pattern (str.isspace).
const pySpaceClass = `\t-\r\x1c-\x1f\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000`

// pythonToNET rewrites the few Python constructs the .NET dialect of
// regexp2 reads differently: \s and \S (Python's set includes \x1c-\x1f),
// \Z (end of string in Python, before a final newline in .NET), {,n}
// (zero to n in Python) and a leading ] in a class.
func pythonToNET(p string) string {
	var b strings.Builder
	b.Grow(len(p) + 16)
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			switch n := p[i+1]; n {
			case 's':
				if inClass {
					b.WriteString(pySpaceClass)
				} else {
					b.WriteString("[" + pySpaceClass + "]")
				}
			case 'S':
				if inClass {
					b.WriteString(`\S`)
				} else {
					b.WriteString("[^" + pySpaceClass + "]")
				}
			case 'Z':
				b.WriteString(`\z`)
			default:
				b.WriteByte(c)
				b.WriteByte(n)
			}
			i++
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
			if i+1 < len(p) && p[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' {
				b.WriteString(`\]`)
				i++
			}
		case c == ']' && inClass:
			inClass = false
			b.WriteByte(c)
		case c == '{' && !inClass && i+1 < len(p) && p[i+1] == ',':
			j := i + 2
			for j < len(p) && p[j] >= '0' && p[j] <= '9' {
				j++
			}
			if j > i+2 && j < len(p) && p[j] == '}' {
				b.WriteString("{0")
			} else {
				b.WriteByte(c)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// piece is one split of a text: s is its text, off its byte offset in the
// text it was split from (-1 when it is not a substring of it), n its length
// under the splitter's length function.
type piece struct {
	s   string
	off int
	n   int
}

// noneOff marks a capturing group that did not participate in a match.
const noneOff = -2

// find reports whether the separator occurs in text (Python's re.search)
// and leaves the matches in st for the split that follows.
func (sp *separator) find(text string, st *splitState) bool {
	switch sp.kind {
	case sepChars:
		return true
	case sepLiteral:
		st.first = strings.Index(text, sp.lit)
		return st.first >= 0
	case sepSimple:
		st.pairs = sp.simple.appendMatches(text, st.pairs[:0])
		return len(st.pairs) > 0
	case sepRE2:
		if sp.groups == 0 {
			st.pairs = st.pairs[:0]
			for _, m := range sp.re.FindAllStringIndex(text, -1) {
				st.pairs = append(st.pairs, m[0], m[1])
			}
			return len(st.pairs) > 0
		}
		st.locs = sp.re.FindAllStringSubmatchIndex(text, -1)
		return len(st.locs) > 0
	default:
		st.locs = sp.pyMatches(text, st)
		return len(st.locs) > 0
	}
}

// pyMatches returns the byte offsets of every match of a sepPython
// separator and of its groups (-1 for a group that did not participate),
// successive as Python's re.split finds them: since Python 3.7 an empty
// match may follow a non-empty one, but not another empty match at the same
// position.
func (sp *separator) pyMatches(text string, st *splitState) [][]int {
	runes := append(st.runes[:0], []rune(text)...)
	st.runes = runes
	var offs []int // byte offset of each rune, when text is not ASCII
	if len(runes) != len(text) {
		offs = st.offs[:0]
		for i := range text {
			offs = append(offs, i)
		}
		// []rune(text) turns each invalid byte into one U+FFFD, as range does.
		offs = append(offs, len(text))
		st.offs = offs
	}
	toByte := func(r int) int {
		if offs == nil {
			return r
		}
		return offs[r]
	}
	var locs [][]int
	pos := 0
	mustAdvance := false
	for pos <= len(runes) {
		m, err := sp.py.FindRunesMatchStartingAt(runes, pos)
		if err != nil || m == nil {
			break
		}
		if mustAdvance && m.RuneLength == 0 && m.RuneIndex == pos {
			if pos >= len(runes) {
				break
			}
			if m, err = sp.py.FindRunesMatchStartingAt(runes, pos+1); err != nil || m == nil {
				break
			}
		}
		loc := make([]int, 2*(sp.groups+1))
		for g := 0; g <= sp.groups; g++ {
			grp := m.GroupByNumber(g)
			if grp == nil || len(grp.Captures) == 0 {
				loc[2*g], loc[2*g+1] = -1, -1
				continue
			}
			loc[2*g] = toByte(grp.RuneIndex)
			loc[2*g+1] = toByte(grp.RuneIndex + grp.RuneLength)
		}
		locs = append(locs, loc)
		mustAdvance = m.RuneLength == 0
		pos = m.RuneIndex + m.RuneLength
	}
	return locs
}

// split appends to dst the non-empty pieces LangChain's
// _split_text_with_regex returns for text, using the matches find left in
// st. With KeepStart each separator begins the piece after it, with KeepEnd
// it ends the piece before it, with KeepNone it is dropped.
func (sp *separator) split(text string, keep KeepSeparator, st *splitState, dst []piece) []piece {
	switch sp.kind {
	case sepChars:
		for i := 0; i < len(text); {
			w := 1
			if text[i] >= utf8.RuneSelf {
				_, w = utf8.DecodeRuneInString(text[i:])
			}
			dst = append(dst, piece{s: text[i : i+w], off: i})
			i += w
		}
		return dst
	case sepLiteral:
		return splitLiteral(text, sp.lit, st.first, keep, dst)
	}
	if sp.kind == sepSimple || (sp.kind == sepRE2 && sp.groups == 0) {
		return splitAt(text, st.pairs, keep, dst)
	}
	return splitGeneric(text, st.locs, sp.groups, keep, dst)
}

// batchPieces is the most pieces splitFrom returns at a time.
const batchPieces = 4096

// cursor is where a batched split (splitFrom) resumes.
type cursor struct {
	pos  int  // byte offset of the next code point (sepChars) or of the current segment (sepLiteral)
	next int  // sepLiteral: the next occurrence of the separator, -1 when none is left
	done bool // the last piece has been returned
}

// splitFrom is split for the sepChars and sepLiteral kinds, at most
// batchPieces pieces at a time from c, which it advances. For sepLiteral,
// c.next starts at the first occurrence (find's st.first).
func (sp *separator) splitFrom(text string, keep KeepSeparator, c *cursor, dst []piece) []piece {
	if sp.kind == sepChars {
		i := c.pos
		for i < len(text) && len(dst) < batchPieces {
			w := 1
			if text[i] >= utf8.RuneSelf {
				_, w = utf8.DecodeRuneInString(text[i:])
			}
			dst = append(dst, piece{s: text[i : i+w], off: i})
			i += w
		}
		c.pos, c.done = i, i >= len(text)
		return dst
	}
	lit := sp.lit
	seg, k := c.pos, c.next
	for k >= 0 && len(dst) < batchPieces {
		end := k + len(lit)
		dst, seg = cutAt(dst, text, seg, k, end, keep)
		if j := strings.Index(text[end:], lit); j >= 0 {
			k = end + j
		} else {
			k = -1
		}
	}
	c.pos, c.next = seg, k
	if k < 0 {
		dst = appendPiece(dst, text, seg, len(text))
		c.done = true
	}
	return dst
}

// cutAt ends the piece that began at seg at the separator text[start:end],
// which goes with the piece before (KeepEnd), the piece after (KeepStart)
// or neither, and returns where the next piece begins.
func cutAt(dst []piece, text string, seg, start, end int, keep KeepSeparator) ([]piece, int) {
	switch keep {
	case KeepStart:
		return appendPiece(dst, text, seg, start), start
	case KeepEnd:
		return appendPiece(dst, text, seg, end), end
	default:
		return appendPiece(dst, text, seg, start), end
	}
}

// appendPiece appends text[from:to] to dst unless it is empty.
func appendPiece(dst []piece, text string, from, to int) []piece {
	if to > from {
		dst = append(dst, piece{s: text[from:to], off: from})
	}
	return dst
}

// splitLiteral splits text at the non-overlapping occurrences of lit, the
// first of which is at byte first (-1: none).
func splitLiteral(text, lit string, first int, keep KeepSeparator, dst []piece) []piece {
	seg := 0
	for k := first; k >= 0; {
		end := k + len(lit)
		dst, seg = cutAt(dst, text, seg, k, end, keep)
		j := strings.Index(text[end:], lit)
		if j < 0 {
			break
		}
		k = end + j
	}
	return appendPiece(dst, text, seg, len(text))
}

// splitAt splits text at non-empty matches without groups, given as
// [start, end) pairs.
func splitAt(text string, pairs []int, keep KeepSeparator, dst []piece) []piece {
	seg := 0
	for i := 0; i+1 < len(pairs); i += 2 {
		start, end := pairs[i], pairs[i+1]
		dst, seg = cutAt(dst, text, seg, start, end, keep)
	}
	return appendPiece(dst, text, seg, len(text))
}

// splitGeneric reproduces re.split's flat result for patterns with groups
// or empty matches, then LangChain's pairing of it: with a separator kept,
// re.split(f"({sep})") yields [text, match, groups..., text, ...] and
// LangChain concatenates neighbours pairwise. A group that did not
// participate (Python's None, on which LangChain would raise) counts as "".
func splitGeneric(text string, locs [][]int, groups int, keep KeepSeparator, dst []piece) []piece {
	flat := make([]piece, 0, len(locs)*(groups+2)+1)
	last := 0
	for _, m := range locs {
		flat = append(flat, piece{s: text[last:m[0]], off: last})
		first := 1
		if keep != KeepNone {
			first = 0
		}
		for g := first; g <= groups; g++ {
			if m[2*g] < 0 {
				flat = append(flat, piece{off: noneOff})
				continue
			}
			flat = append(flat, piece{s: text[m[2*g]:m[2*g+1]], off: m[2*g]})
		}
		last = m[1]
	}
	flat = append(flat, piece{s: text[last:], off: last})

	add := func(p piece) {
		if p.s != "" {
			dst = append(dst, p)
		}
	}
	n := len(flat)
	switch keep {
	case KeepStart:
		add(flat[0])
		for i := 1; i+1 < n; i += 2 {
			add(concatPieces(text, flat[i], flat[i+1]))
		}
		if n%2 == 0 {
			add(flat[n-1])
		}
	case KeepEnd:
		for i := 0; i < n-1; i += 2 {
			add(concatPieces(text, flat[i], flat[i+1]))
		}
		if n%2 == 0 {
			add(flat[n-1])
		}
		add(flat[n-1])
	default:
		for _, p := range flat {
			add(p)
		}
	}
	return dst
}

// concatPieces returns a+b, as a substring of text when they are adjacent.
func concatPieces(text string, a, b piece) piece {
	switch {
	case a.s == "":
		return b
	case b.s == "":
		return a
	case a.off >= 0 && b.off >= 0 && a.off+len(a.s) == b.off:
		return piece{s: text[a.off : b.off+len(b.s)], off: a.off}
	}
	return piece{s: a.s + b.s, off: -1}
}
