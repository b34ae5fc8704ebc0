package parentstore

import (
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/utf8word"
)

// appendParentJSON appends p as encoding/json marshals it, byte for byte
// (field order and omitempty of hierarchy.Parent's tags, metadata keys
// sorted, strings escaped as json.Marshal escapes them), without the
// reflection and the buffer of its own that Marshal costs per parent.
// TestParentJSONIsMarshal and FuzzParentJSONIsMarshal hold it to that.
func appendParentJSON(dst []byte, p *hierarchy.Parent) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, p.ID)
	dst = append(dst, `,"docId":`...)
	dst = appendJSONString(dst, p.DocID)
	if p.Title != "" {
		dst = append(dst, `,"title":`...)
		dst = appendJSONString(dst, p.Title)
	}
	if len(p.HeadingPath) > 0 {
		dst = appendJSONList(dst, `,"headingPath":[`, p.HeadingPath, appendJSONString)
	}
	if p.Level != "" {
		dst = append(dst, `,"level":`...)
		dst = appendJSONString(dst, string(p.Level))
	}
	if p.ParentID != "" {
		dst = append(dst, `,"parentId":`...)
		dst = appendJSONString(dst, p.ParentID)
	}
	if p.Pages != nil {
		dst = append(dst, `,"pages":{"first":`...)
		dst = strconv.AppendInt(dst, int64(p.Pages.First), 10)
		dst = append(dst, `,"last":`...)
		dst = strconv.AppendInt(dst, int64(p.Pages.Last), 10)
		dst = append(dst, '}')
	}
	dst = append(dst, `,"ordinal":`...)
	dst = strconv.AppendInt(dst, int64(p.Ordinal), 10)
	dst = append(dst, `,"text":`...)
	dst = appendJSONString(dst, p.Text)
	dst = append(dst, `,"start":`...)
	dst = strconv.AppendInt(dst, int64(p.Start), 10)
	if len(p.Children) > 0 {
		dst = appendJSONList(dst, `,"children":[`, p.Children, appendSpanJSON)
	}
	if len(p.Metadata) > 0 {
		dst = appendMetadataJSON(dst, p.Metadata)
	}
	return append(dst, '}')
}

// appendJSONList appends open, then each item as appendItem writes it,
// separated by commas, then the closing bracket.
func appendJSONList[T any](dst []byte, open string, items []T, appendItem func([]byte, T) []byte) []byte {
	dst = append(dst, open...)
	for i, item := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendItem(dst, item)
	}
	return append(dst, ']')
}

// appendSpanJSON appends s as encoding/json marshals it.
func appendSpanJSON(dst []byte, s hierarchy.Span) []byte {
	dst = append(dst, `{"id":`...)
	dst = appendJSONString(dst, s.ID)
	dst = append(dst, `,"start":`...)
	dst = strconv.AppendInt(dst, int64(s.Start), 10)
	dst = append(dst, `,"end":`...)
	dst = strconv.AppendInt(dst, int64(s.End), 10)
	return append(dst, '}')
}

// appendMetadataJSON appends the metadata field of a parent, its keys
// sorted as encoding/json sorts a map's.
func appendMetadataJSON(dst []byte, m map[string]string) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, `,"metadata":{`...)
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, k)
		dst = append(dst, ':')
		dst = appendJSONString(dst, m[k])
	}
	return append(dst, '}')
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted as encoding/json quotes a string: '"'
// and '\\' escaped, \b \f \n \r \t by name, other control bytes and the
// HTML-sensitive '<', '>' and '&' as \u00XX, U+2028 and U+2029 as \u2028
// and \u2029, and each byte of invalid UTF-8 as \ufffd.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) && plainJSONWord(utf8word.Load(s, i)) {
			i += 8
			continue
		}
		b := s[i]
		if b < utf8.RuneSelf {
			if plainJSON[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = appendEscapedByte(dst, b)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plainJSONWord reports whether all eight bytes of x are plainJSON bytes:
// none has its high bit set, none is below 0x20, and none is one of the
// five that are escaped. Each test is exact, so eight plain bytes are
// passed over at once and any other word is read byte by byte.
func plainJSONWord(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below := func(n uint64) bool { return (x-n*ones)&^x&highs != 0 } // some byte < n, of ASCII bytes
	holds := func(c uint64) bool { y := x ^ c*ones; return (y-ones)&^y&highs != 0 }
	return utf8word.ASCII(x) && !below(0x20) &&
		!holds('"') && !holds('\\') && !holds('<') && !holds('>') && !holds('&')
}

// plainJSON says which ASCII bytes encoding/json writes into a string as
// they are: all but control characters, the quote, the backslash and the
// three it escapes for HTML (<, > and &).
var plainJSON = func() (plain [utf8.RuneSelf]bool) {
	for b := byte(0x20); b < utf8.RuneSelf; b++ {
		plain[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return plain
}()

// appendEscapedByte appends the escape of an ASCII byte that a JSON
// string does not hold as it is.
func appendEscapedByte(dst []byte, b byte) []byte {
	switch b {
	case '"', '\\':
		return append(dst, '\\', b)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
}
