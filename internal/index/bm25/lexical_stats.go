package bm25

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// Serialised statistics layout, version 1 (integers are unsigned varints
// unless noted, strings are a length then bytes):
//
//	magic "PRLX" | version | analyzer name | k1, b (float64 bits, 8 bytes
//	little endian each) | N | total tokens | vocabulary size |
//	per term in id (sorted) order: shared prefix length with the previous
//	term, suffix string, df | CRC-32 (IEEE, 4 bytes little endian) of all
//	preceding bytes
const (
	statsMagic   = "PRLX"
	statsVersion = 1
)

// MarshalStats serialises the BM25 parameters and corpus statistics in a
// compact, versioned, checksummed binary form (sorted terms front-coded), from
// which LoadLexical rebuilds an embedder producing identical vectors. It
// fails with ErrNotFitted before Fit.
func (l *Lexical) MarshalStats() ([]byte, error) {
	st, err := l.fitted()
	if err != nil {
		return nil, err
	}
	terms := st.termsByID()
	b := make([]byte, 0, 64+len(terms)*8)
	b = append(b, statsMagic...)
	b = binary.AppendUvarint(b, statsVersion)
	b = appendString(b, AnalyzerName)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(l.k1))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(l.b))
	b = binary.AppendUvarint(b, uint64(st.docs))
	b = binary.AppendUvarint(b, st.totalLen)
	b = binary.AppendUvarint(b, uint64(len(terms)))
	prev := ""
	for id, t := range terms {
		p := commonPrefixLen(prev, t)
		b = binary.AppendUvarint(b, uint64(p))
		b = appendString(b, t[p:])
		b = binary.AppendUvarint(b, uint64(st.df[id]))
		prev = t
	}
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b)), nil
}

// termsByID returns the vocabulary terms indexed by id (so sorted).
func (st *lexicalStats) termsByID() []string {
	terms := make([]string, len(st.df))
	for t, id := range st.vocab {
		terms[id] = t
	}
	return terms
}

// appendString appends a length-prefixed string.
func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// commonPrefixLen returns the length in bytes of the longest common prefix.
func commonPrefixLen(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// LoadLexical rebuilds a fitted BM25 embedder from MarshalStats output. It
// rejects, with a descriptive error, data that is truncated, corrupted (bad
// checksum), of another format version, built by another analyzer (see
// AnalyzerName), or internally inconsistent.
func LoadLexical(data []byte) (*Lexical, error) {
	body, err := checkStatsFrame(data)
	if err != nil {
		return nil, fmt.Errorf("load bm25 stats: %w", err)
	}
	r := &statsReader{data: body}
	l, st := r.header()
	if r.err == nil {
		r.vocabulary(st)
	}
	if r.err == nil && len(r.data) != 0 {
		r.fail("%d trailing bytes", len(r.data))
	}
	if r.err != nil {
		return nil, fmt.Errorf("load bm25 stats: %w", r.err)
	}
	if st.docs > 0 {
		st.avgLen = float64(st.totalLen) / float64(st.docs)
	}
	l.stats.Store(st)
	return l, nil
}

// checkStatsFrame verifies the magic and checksum and returns the bytes
// between them.
func checkStatsFrame(data []byte) ([]byte, error) {
	if len(data) < len(statsMagic)+4 || string(data[:len(statsMagic)]) != statsMagic {
		return nil, errors.New("not bm25 statistics (bad magic or too short)")
	}
	end := len(data) - 4
	if crc32.ChecksumIEEE(data[:end]) != binary.LittleEndian.Uint32(data[end:]) {
		return nil, errors.New("checksum mismatch (corrupted data)")
	}
	return data[len(statsMagic):end], nil
}

// statsReader decodes the statistics body; the first error sticks.
type statsReader struct {
	data []byte
	err  error
}

// fail records an error unless one is already recorded.
func (r *statsReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf(format, args...)
	}
}

// uvarint reads one unsigned varint.
func (r *statsReader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.data)
	if n <= 0 {
		r.fail("truncated or invalid %s", what)
		return 0
	}
	r.data = r.data[n:]
	return v
}

// bytes reads n raw bytes.
func (r *statsReader) bytes(n uint64, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.data)) {
		r.fail("truncated %s", what)
		return nil
	}
	b := r.data[:n]
	r.data = r.data[n:]
	return b
}

// float reads a little-endian float64.
func (r *statsReader) float(what string) float64 {
	b := r.bytes(8, what)
	if b == nil {
		return 0
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

// header reads and validates everything before the vocabulary.
func (r *statsReader) header() (*Lexical, *lexicalStats) {
	if v := r.uvarint("version"); r.err == nil && v != statsVersion {
		r.fail("unsupported version %d (want %d)", v, statsVersion)
	}
	name := r.bytes(r.uvarint("analyzer name length"), "analyzer name")
	if r.err == nil && string(name) != AnalyzerName {
		r.fail("built by analyzer %q, this build analyzes with %q", name, AnalyzerName)
	}
	k1, b := r.float("k1"), r.float("b")
	if r.err == nil {
		if err := validateParams(k1, b); err != nil {
			r.fail("%w", err)
		}
	}
	docs := r.uvarint("document count")
	if r.err == nil && docs > math.MaxUint32 {
		r.fail("document count %d exceeds 2^32-1", docs)
	}
	st := &lexicalStats{docs: int(docs), totalLen: r.uvarint("token count")}
	return &Lexical{k1: k1, b: b}, st
}

// vocabulary reads the front-coded terms and their document frequencies,
// checking that terms strictly increase and frequencies are within [1, N].
func (r *statsReader) vocabulary(st *lexicalStats) {
	size := r.uvarint("vocabulary size")
	if r.err == nil && size > uint64(len(r.data))/3 { // a term takes >= 3 bytes
		r.fail("vocabulary size %d exceeds the data", size)
	}
	if r.err != nil {
		return
	}
	st.vocab = make(map[string]uint32, size)
	st.df = make([]uint32, size)
	var cur []byte
	var dfSum uint64
	for id := range st.df {
		term, df := r.term(cur)
		if r.err != nil {
			return
		}
		if df == 0 || df > uint64(st.docs) {
			r.fail("term %q has document frequency %d outside [1, %d]", term, df, st.docs)
			return
		}
		cur = term
		st.vocab[string(term)] = uint32(id)
		st.df[id] = uint32(df)
		dfSum += df
	}
	if dfSum > st.totalLen {
		r.fail("document frequencies sum to %d, more than the %d tokens", dfSum, st.totalLen)
	}
}

// term reads the next front-coded term, which must sort strictly after prev,
// and its document frequency. The returned slice reuses prev's storage.
func (r *statsReader) term(prev []byte) ([]byte, uint64) {
	p := r.uvarint("term prefix")
	if r.err == nil && p > uint64(len(prev)) {
		r.fail("term prefix %d longer than previous term", p)
	}
	suffix := r.bytes(r.uvarint("term length"), "term")
	df := r.uvarint("document frequency")
	if r.err != nil {
		return nil, 0
	}
	if len(suffix) == 0 || (int(p) < len(prev) && suffix[0] <= prev[p]) {
		r.fail("terms not strictly increasing after %q", prev)
		return nil, 0
	}
	return append(prev[:p], suffix...), df
}
