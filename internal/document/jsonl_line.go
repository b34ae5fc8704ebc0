package document

import (
	"bytes"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MetadataKey is the member of a JSON Lines document that holds its
// metadata, an object of strings.
const MetadataKey = "metadata"

// FlatLine is one line of a JSON Lines corpus read by DecodeFlatLine: the
// string value of each key it was given, whether the line had that key,
// and the line's metadata (nil without a "metadata" member).
type FlatLine struct {
	Values   []string
	Has      []bool
	Metadata map[string]string
}

// DecodeFlatLine decodes raw, one line of a JSON Lines corpus, when it has
// the shape nearly every line has: an object whose members are each named
// by one of keys, spelled exactly, with a string value, or are "metadata"
// with an object of strings (or null), each member at most once, in valid
// UTF-8. It
// reports false for any other line (another or a repeated member, a key in
// other case, a number, invalid JSON), which the caller decodes with
// encoding/json instead. For a line it decodes, the values are those
// encoding/json.Unmarshal gives the same fields, escapes included, so the
// result never depends on which of the two read the line; it is a few
// times faster, which matters when a corpus is hundreds of megabytes.
func DecodeFlatLine(raw []byte, keys []string) (FlatLine, bool) {
	if !utf8.Valid(raw) {
		return FlatLine{}, false // encoding/json replaces invalid bytes
	}
	line := FlatLine{Values: make([]string, len(keys)), Has: make([]bool, len(keys))}
	p := lineParser{b: raw}
	if !p.byte('{') {
		return FlatLine{}, false
	}
	for first := true; ; first = false {
		if p.byte('}') {
			return line, p.atEnd()
		}
		if !first && !p.byte(',') {
			return FlatLine{}, false
		}
		key, ok := p.member()
		if !ok || !line.set(&p, key, keys) {
			return FlatLine{}, false
		}
	}
}

// ValueOrNil is the value of the i-th key, or nil when the line lacks it.
func (line *FlatLine) ValueOrNil(i int) *string {
	if !line.Has[i] {
		return nil
	}
	return &line.Values[i]
}

// set reads the value of the member key into line; false when the key is
// unknown or repeated, or its value is not of the shape it needs. A null
// leaves the value unset, as encoding/json leaves a field.
func (line *FlatLine) set(p *lineParser, key string, keys []string) bool {
	if key == MetadataKey {
		if line.Metadata != nil {
			return false // encoding/json would merge the two, or null the first
		}
		if p.null() {
			return true
		}
		line.Metadata, _ = p.stringObject()
		return line.Metadata != nil
	}
	i := slices.Index(keys, key)
	if i < 0 || line.Has[i] {
		return false
	}
	if p.null() {
		return true
	}
	line.Values[i], line.Has[i] = p.string()
	return line.Has[i]
}

// lineParser reads JSON from b at i.
type lineParser struct {
	b []byte
	i int
}

// skipSpace moves past JSON whitespace.
func (p *lineParser) skipSpace() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// byte moves past whitespace and c, reporting whether c came next; it
// moves past the whitespace alone when it did not.
func (p *lineParser) byte(c byte) bool {
	p.skipSpace()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// atEnd reports whether nothing but whitespace is left.
func (p *lineParser) atEnd() bool {
	p.skipSpace()
	return p.i == len(p.b)
}

// null moves past whitespace and a null, reporting whether one came next.
func (p *lineParser) null() bool {
	p.skipSpace()
	if bytes.HasPrefix(p.b[p.i:], []byte("null")) {
		p.i += len("null")
		return true
	}
	return false
}

// member reads a member's key and the colon after it.
func (p *lineParser) member() (string, bool) {
	key, ok := p.string()
	return key, ok && p.byte(':')
}

// stringObject reads an object of strings, later members overwriting
// earlier ones of the same key as encoding/json does for a map; nil when
// the value is not such an object.
func (p *lineParser) stringObject() (map[string]string, bool) {
	if !p.byte('{') {
		return nil, false
	}
	m := map[string]string{}
	for first := true; ; first = false {
		if p.byte('}') {
			return m, true
		}
		if !first && !p.byte(',') {
			return nil, false
		}
		key, ok := p.member()
		if !ok {
			return nil, false
		}
		if m[key], ok = p.string(); !ok {
			return nil, false
		}
	}
}

// stringEnds marks the bytes that end the plain run of a JSON string: the
// closing quote, a backslash, and the control characters JSON forbids.
var stringEnds = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// string reads a JSON string, decoding its escapes: a string without any
// is one copy of its bytes, one with escapes is built in a strings.Builder
// from its plain runs and what each escape stands for.
func (p *lineParser) string() (string, bool) {
	if !p.byte('"') {
		return "", false
	}
	b, i := p.b, p.i
	if end := plainRun(b, i); end < len(b) && b[end] == '"' {
		p.i = end + 1
		return string(b[i:end]), true
	}
	var out strings.Builder
	out.Grow(len(b) - i) // at most what is left of the line: escapes only shrink
	for {
		end := plainRun(b, i)
		out.Write(b[i:end])
		switch {
		case end == len(b) || b[end] < 0x20:
			return "", false
		case b[end] == '"':
			p.i = end + 1
			return out.String(), true
		}
		n := unescape(&out, b[end:])
		if n == 0 {
			return "", false
		}
		i = end + n
	}
}

// plainRun returns where the run of plain string bytes from i ends: at the
// first quote, backslash or control character, or at len(b).
func plainRun(b []byte, i int) int {
	for i < len(b) && !stringEnds[b[i]] {
		i++
	}
	return i
}

// unescape writes what the escape at the start of s stands for, as
// encoding/json unquotes it (an escaped surrogate that is not half of a
// pair is U+FFFD), and returns its length; 0 when s starts with none.
func unescape(out *strings.Builder, s []byte) int {
	if len(s) < 2 {
		return 0
	}
	if e := simpleEscapes[s[1]]; e != 0 {
		out.WriteByte(e)
		return 2
	}
	r := hex4(s)
	if r < 0 {
		return 0
	}
	if !utf16.IsSurrogate(r) {
		out.WriteRune(r)
		return 6
	}
	if pair := utf16.DecodeRune(r, hex4(s[6:])); pair != unicode.ReplacementChar {
		out.WriteRune(pair)
		return 12
	}
	out.WriteRune(unicode.ReplacementChar)
	return 6
}

// simpleEscapes maps the byte after a backslash to what it stands for,
// for every JSON escape but \u; 0 for any other byte.
var simpleEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// hex4 reads the escape \uXXXX at the start of s; -1 when there is none.
func hex4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}
