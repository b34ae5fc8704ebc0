package split

import (
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// simpleItem is a run of one ASCII byte repeated min to max times (max < 0:
// unbounded).
type simpleItem struct {
	b        byte
	min, max int
}

// simplePattern is a regular expression that is a sequence of byte runs,
// adjacent runs of different bytes, each at least once: "\n#{1,6} ",
// "\n\*\*\*+\n", "\n---+\n". For such a pattern the leftmost-first greedy
// match at a position is unique and needs no backtracking, so it is found
// with strings.Index on its fixed prefix and a byte loop.
type simplePattern struct {
	prefix string
	items  []simpleItem
}

// parseSimple returns the simplePattern of re, or false when re is not one.
func parseSimple(re string) (*simplePattern, bool) {
	t, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return nil, false
	}
	subs := []*syntax.Regexp{t}
	if t.Op == syntax.OpConcat {
		subs = t.Sub
	}
	var items []simpleItem
	add := func(r rune, min, max int) bool {
		if r >= utf8.RuneSelf || r < 0 {
			return false
		}
		b := byte(r)
		if n := len(items); n > 0 && items[n-1].b == b {
			last := &items[n-1]
			last.min += min
			if last.max >= 0 && max >= 0 {
				last.max += max
			} else {
				last.max = -1
			}
			return true
		}
		items = append(items, simpleItem{b: b, min: min, max: max})
		return true
	}
	single := func(t *syntax.Regexp) (rune, bool) {
		if t.Op != syntax.OpLiteral || len(t.Rune) != 1 || t.Flags&syntax.FoldCase != 0 {
			return 0, false
		}
		return t.Rune[0], true
	}
	for _, s := range subs {
		switch s.Op {
		case syntax.OpLiteral:
			if s.Flags&syntax.FoldCase != 0 {
				return nil, false
			}
			for _, r := range s.Rune {
				if !add(r, 1, 1) {
					return nil, false
				}
			}
		case syntax.OpPlus, syntax.OpRepeat:
			if s.Flags&syntax.NonGreedy != 0 {
				return nil, false
			}
			r, ok := single(s.Sub[0])
			if !ok {
				return nil, false
			}
			min, max := 1, -1
			if s.Op == syntax.OpRepeat {
				min, max = s.Min, s.Max
			}
			if min < 1 || !add(r, min, max) {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	if len(items) == 0 {
		return nil, false
	}
	var prefix strings.Builder
	for _, it := range items {
		prefix.WriteString(strings.Repeat(string(it.b), it.min))
		if it.max != it.min {
			break
		}
	}
	return &simplePattern{prefix: prefix.String(), items: items}, true
}

// matchAt returns the end of the match starting at byte i of s, or -1.
func (p *simplePattern) matchAt(s string, i int) int {
	for _, it := range p.items {
		n := 0
		for i < len(s) && s[i] == it.b && (it.max < 0 || n < it.max) {
			i++
			n++
		}
		if n < it.min {
			return -1
		}
	}
	return i
}

// appendMatches appends the [start, end) pairs of the successive
// non-overlapping leftmost matches in s to dst.
func (p *simplePattern) appendMatches(s string, dst []int) []int {
	for pos := 0; pos < len(s); {
		k := strings.Index(s[pos:], p.prefix)
		if k < 0 {
			break
		}
		start := pos + k
		if end := p.matchAt(s, start); end >= 0 {
			dst = append(dst, start, end)
			pos = end
		} else {
			pos = start + 1
		}
	}
	return dst
}
