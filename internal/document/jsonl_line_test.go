package document

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/synthtest"
)

// unmarshalDocument is ParseJSONDocument by encoding/json alone, the
// reference the fast path must agree with.
func unmarshalDocument(raw []byte) (hierarchy.Document, error) {
	var d JSONDocument
	if err := json.Unmarshal(raw, &d); err != nil {
		return hierarchy.Document{}, fmt.Errorf("not a JSON document object: %w", err)
	}
	return d.Document()
}

// checkSameDocument fails unless ParseJSONDocument reads raw as encoding/json
// does: the same document, metadata nil or empty alike, or the same error.
func checkSameDocument(t *testing.T, raw []byte) {
	t.Helper()
	got, gotErr := ParseJSONDocument(raw)
	want, wantErr := unmarshalDocument(raw)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
		t.Fatalf("line %q:\n got %#v, error %v\nwant %#v, error %v", raw, got, gotErr, want, wantErr)
	}
}

// TestParseJSONDocumentReadsAsEncodingJSON: random lines, valid and not, with
// every kind of escape (lone and paired surrogates, \/, control
// characters), other members, repeated and differently cased keys, nulls,
// numbers, nested metadata, whitespace and trailing bytes, each decode to
// what encoding/json makes of them.
func TestParseJSONDocumentReadsAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	fast := 0
	for range 20000 {
		raw := randomLine(r)
		if _, ok := DecodeFlatLine(raw, jsonDocumentKeys); ok {
			fast++
		}
		checkSameDocument(t, raw)
	}
	if fast < 2000 {
		t.Fatalf("DecodeFlatLine read %d of 20000 random lines; the test reaches too few of its paths", fast)
	}
}

// TestDecodeFlatLineReadsTheUsualLines: a line as encoding/json writes a
// document, with metadata or without, in any order, is read by the fast
// path, so that loading a corpus takes it.
func TestDecodeFlatLineReadsTheUsualLines(t *testing.T) {
	docs, _ := synthtest.BenchDocuments(1 << 20)
	for i, d := range docs {
		var meta map[string]string
		if i%2 == 0 {
			meta = map[string]string{"source": "bench <&> \u2028", "n": fmt.Sprint(i)}
		}
		raw, err := json.Marshal(JSONDocument{BEIRID: d.ID, Title: d.Title, Text: &d.Text, Metadata: meta})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := DecodeFlatLine(raw, jsonDocumentKeys); !ok {
			t.Fatalf("the fast path refused %.200q", raw)
		}
		checkSameDocument(t, raw)
	}
}

// TestDecodeFlatLineReadsEveryEscape: lines of the usual shape written by
// hand, with escapes of both cases of hex, surrogate pairs, lone
// surrogates, null members and whitespace, are read by the fast path, and
// to what encoding/json reads.
func TestDecodeFlatLineReadsEveryEscape(t *testing.T) {
	for _, line := range []string{
		`{"_id":"a","text":"\u00E9\u00e9\uD83D\uDE00\ud83d\ude00"}`,
		`{"_id":"a","text":"\ud83d\u0041 \udE00 \uD800"}`,
		`{"_id":"a","text":"\"\\\/\b\f\n\r\t","title":"\u0000"}`,
		` { "_id" : "a" ,` + "\t\r\n" + ` "text" : "x" , "metadata" : { "k" : "\u2028" , "k" : "last" } } `,
		`{"_id":"a","text":"x","title":null,"metadata":null}`,
		`{"title":null,"_id":"a","text":null,"text":"y"}`,
		`{"text":"é日本😀","_id":"a","metadata":{}}`,
	} {
		if _, ok := DecodeFlatLine([]byte(line), jsonDocumentKeys); !ok {
			t.Errorf("the fast path refused %s", line)
		}
		checkSameDocument(t, []byte(line))
	}
}

// TestDecodeFlatLineRefusesRawControlCharacters: JSON forbids every
// control character inside a string, as encoding/json does.
func TestDecodeFlatLineRefusesRawControlCharacters(t *testing.T) {
	for c := range byte(0x20) {
		for _, line := range []string{`{"_id":"a","text":"x` + string(c) + `"}`, `{"_id":"a","text":"\n` + string(c) + `"}`} {
			if _, ok := DecodeFlatLine([]byte(line), jsonDocumentKeys); ok {
				t.Errorf("the fast path read %q, a raw %#x in a string", line, c)
			}
			checkSameDocument(t, []byte(line))
		}
	}
}

// FuzzParseJSONDocument: whatever the line, ParseJSONDocument reads it as
// encoding/json does.
func FuzzParseJSONDocument(f *testing.F) {
	for _, seed := range []string{
		`{"_id":"a","text":"one"}`,
		`{"_id":"a","title":"T","text":"x\n\"y\"\\z\/\u00e9\ud83d\ude00","metadata":{"k":"v","k":"w"}}`,
		`{"_id":"a","text":"\ud800\u0041"}`,
		`{"_id":"a","text":"\udc00"}`,
		`{"_id":"a","text":"x", "_ID":"b"}`,
		`{"_id":"a","text":null}`,
		`{"_id":"a","text":"x","metadata":{"n":1}}`,
		` { "_id" : "a" , "text" : "x" } `,
		`{"_id":"a","text":"x"} x`,
		"{\"_id\":\"a\",\"text\":\"\x01\"}",
		"{\"_id\":\"a\",\"text\":\"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkSameDocument(t, raw) })
}

// randomLine writes a line that is mostly a document object, with a
// random share of the ways a line can differ from the usual one.
func randomLine(r *rand.Rand) []byte {
	var b strings.Builder
	ws := func() {
		for range r.IntN(3) {
			b.WriteByte(" \t\r\n"[r.IntN(4)])
		}
	}
	keys := []string{"_id", "title", "text", "metadata", "_id", "text", "id", "_ID", "Text", "ID", "other"}
	ws()
	b.WriteByte('{')
	for i := range r.IntN(5) {
		if i > 0 {
			ws()
			b.WriteByte(',')
		}
		ws()
		key := keys[r.IntN(len(keys))]
		if r.IntN(8) == 0 {
			key = keys[r.IntN(4)] // a repeated member, now and then
		}
		b.WriteString(randomString(r, key))
		ws()
		b.WriteByte(':')
		ws()
		b.WriteString(randomValue(r, key))
	}
	ws()
	b.WriteByte('}')
	ws()
	switch r.IntN(40) {
	case 0:
		b.WriteString(`x`)
	case 1:
		return []byte(b.String()[:r.IntN(b.Len())])
	}
	return []byte(b.String())
}

// randomValue is the JSON of a member's value: mostly a string, or an
// object of strings for metadata, now and then something else.
func randomValue(r *rand.Rand, key string) string {
	switch r.IntN(12) {
	case 0:
		return "null"
	case 1:
		return "42"
	case 2:
		return `{"nested":{"a":"b"}}`
	}
	if key != MetadataKey || r.IntN(6) == 0 {
		return randomString(r, randomText(r))
	}
	var b strings.Builder
	b.WriteByte('{')
	for i := range r.IntN(4) {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s:%s", randomString(r, randomText(r)), randomString(r, randomText(r)))
	}
	b.WriteByte('}')
	return b.String()
}

// randomText is a short text of letters, markup, accents, emoji, control
// characters and, rarely, a byte that is not UTF-8.
func randomText(r *rand.Rand) string {
	pieces := []string{"a", "Z", " ", "<", "&", "é", "日本", "😀", "\n", "\t", "\"", "\\", "/", "\u2028", "control"}
	var b strings.Builder
	for range r.IntN(8) {
		if p := pieces[r.IntN(len(pieces))]; p != "control" {
			b.WriteString(p)
		} else {
			b.WriteByte(byte(r.IntN(0x20)))
		}
	}
	if r.IntN(60) == 0 {
		b.WriteByte(0xff)
	}
	return b.String()
}

// randomString writes s as a JSON string: by encoding/json, or by hand
// with every escape JSON has, surrogates lone and paired, and now and then
// a raw control character or an escape that is not one.
func randomString(r *rand.Rand, s string) string {
	if r.IntN(3) == 0 {
		out, _ := json.Marshal(s)
		return string(out)
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c < 0x20 && r.IntN(20) != 0: // else raw: invalid JSON
			b.WriteString([]string{`\n`, `\t`, `\r`, `\b`, `\f`, fmt.Sprintf(`\u%04x`, c)}[r.IntN(6)])
		case c > 0xffff && r.IntN(2) == 0:
			hi, lo := surrogates(c)
			fmt.Fprintf(&b, `\u%04X\u%04x`, hi, lo)
		case r.IntN(6) == 0:
			fmt.Fprintf(&b, `\u%04x`, c&0xffff)
		default:
			b.WriteRune(c)
		}
	}
	switch r.IntN(16) {
	case 0:
		b.WriteString(`\ud83d`) // a lone high surrogate
	case 1:
		b.WriteString(`\ude00x`) // a lone low one
	case 2:
		b.WriteString(`\ud83d\u0041`) // high, then no low
	case 3:
		b.WriteString(`\/`)
	case 4:
		b.WriteString(`\x`) // no such escape
	case 5:
		b.WriteString(`\u12g4`)
	}
	b.WriteByte('"')
	return b.String()
}

// surrogates is the UTF-16 pair of c, above U+FFFF.
func surrogates(c rune) (rune, rune) {
	c -= 0x10000
	return 0xd800 + c>>10, 0xdc00 + c&0x3ff
}

// BenchmarkParseJSONDocument reads lines of synthetic documents (about 2 kB
// of text each, with their paragraphs' newlines escaped) by ParseJSONDocument
// and, for comparison, by encoding/json alone; MB/s is of the lines.
func BenchmarkParseJSONDocument(b *testing.B) {
	docs, _ := synthtest.BenchDocuments(4 << 20)
	lines := make([][]byte, len(docs))
	size := 0
	for i, d := range docs {
		raw, err := json.Marshal(JSONDocument{BEIRID: d.ID, Title: d.Title, Text: &d.Text})
		if err != nil {
			b.Fatal(err)
		}
		lines[i] = raw
		size += len(raw)
	}
	for _, read := range []struct {
		name string
		line func([]byte) (hierarchy.Document, error)
	}{{"ParseJSONDocument", ParseJSONDocument}, {"encoding-json", unmarshalDocument}} {
		b.Run(read.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, raw := range lines {
					if _, err := read.line(raw); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
