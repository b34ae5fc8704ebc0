package bm25

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestStatsRoundTrip(t *testing.T) {
	corpus := append(syntheticTexts(300, 20, 11), bm25Corpus...)
	l := fitLexical(t, 1.3, 0.6, corpus)
	data, err := l.MarshalStats()
	if err != nil {
		t.Fatal(err)
	}
	again, _ := l.MarshalStats()
	if !bytes.Equal(data, again) {
		t.Fatal("MarshalStats is not deterministic")
	}
	got, err := LoadLexical(data)
	if err != nil {
		t.Fatal(err)
	}
	if k1, b := got.Params(); k1 != 1.3 || b != 0.6 {
		t.Errorf("params %v %v", k1, b)
	}
	if got.DocCount() != l.DocCount() || got.VocabularySize() != l.VocabularySize() || got.AvgDocLength() != l.AvgDocLength() {
		t.Errorf("statistics differ after load")
	}
	want, _ := l.EmbedDocuments(context.Background(), corpus)
	have, _ := got.EmbedDocuments(context.Background(), corpus)
	for i := range want {
		if !slices.Equal(want[i].Sparse.Indices, have[i].Sparse.Indices) ||
			!slices.Equal(want[i].Sparse.Values, have[i].Sparse.Values) {
			t.Fatalf("document %d embeds differently after load", i)
		}
	}
	for _, q := range bm25Queries {
		a, _ := l.EmbedQuery(context.Background(), q)
		b, _ := got.EmbedQuery(context.Background(), q)
		if !slices.Equal(a.Sparse.Indices, b.Sparse.Indices) || !slices.Equal(a.Sparse.Values, b.Sparse.Values) {
			t.Fatalf("query %q embeds differently after load", q)
		}
	}
}

func TestStatsRoundTripEmptyCorpus(t *testing.T) {
	data, err := fitLexical(t, DefaultK1, DefaultB, nil).MarshalStats()
	if err != nil {
		t.Fatal(err)
	}
	l, err := LoadLexical(data)
	if err != nil || l.DocCount() != 0 || l.VocabularySize() != 0 {
		t.Fatalf("got %v, %v", l, err)
	}
}

func TestLoadLexicalRejectsTruncatedAndCorrupted(t *testing.T) {
	data, _ := fitLexical(t, DefaultK1, DefaultB, bm25Corpus).MarshalStats()
	for n := range len(data) {
		if _, err := LoadLexical(data[:n]); err == nil {
			t.Fatalf("accepted data truncated to %d of %d bytes", n, len(data))
		}
	}
	for i := range data {
		bad := slices.Clone(data)
		bad[i] ^= 0x10
		if _, err := LoadLexical(bad); err == nil {
			t.Fatalf("accepted data with byte %d flipped", i)
		}
	}
}

// statsBody is a hand-built statistics body, re-framed with a valid checksum,
// so that validation beyond the checksum is exercised.
type statsBody struct {
	version  uint64
	analyzer string
	k1, b    float64
	docs     uint64
	tokens   uint64
	terms    []string
	prefix   []uint64 // nil: computed
	df       []uint64
	trailing []byte
}

func (s statsBody) encode() []byte {
	b := []byte(statsMagic)
	b = binary.AppendUvarint(b, s.version)
	b = appendString(b, s.analyzer)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s.k1))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s.b))
	b = binary.AppendUvarint(b, s.docs)
	b = binary.AppendUvarint(b, s.tokens)
	b = binary.AppendUvarint(b, uint64(len(s.terms)))
	for i, term := range s.terms {
		b = binary.AppendUvarint(b, 0)
		if s.prefix != nil {
			b[len(b)-1] = byte(s.prefix[i])
			term = term[s.prefix[i]:]
		}
		b = appendString(b, term)
		b = binary.AppendUvarint(b, s.df[i])
	}
	b = append(b, s.trailing...)
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

func validStatsBody() statsBody {
	return statsBody{
		version: statsVersion, analyzer: AnalyzerName, k1: 1, b: 0.5,
		docs: 2, tokens: 4, terms: []string{"cat", "dog"}, df: []uint64{1, 2},
	}
}

func TestLoadLexicalValidation(t *testing.T) {
	if _, err := LoadLexical(validStatsBody().encode()); err != nil {
		t.Fatalf("valid body rejected: %v", err)
	}
	tests := []struct {
		name   string
		mutate func(*statsBody)
		want   string
	}{
		{"version", func(s *statsBody) { s.version = 2 }, "unsupported version 2"},
		{"analyzer", func(s *statsBody) { s.analyzer = "other/v9" }, `analyzer "other/v9"`},
		{"k1", func(s *statsBody) { s.k1 = -1 }, "k1"},
		{"b", func(s *statsBody) { s.b = math.NaN() }, "bm25 b"},
		{"df zero", func(s *statsBody) { s.df[0] = 0 }, "document frequency 0"},
		{"df above N", func(s *statsBody) { s.df[1] = 3 }, "outside [1, 2]"},
		{"unsorted", func(s *statsBody) { s.terms = []string{"dog", "cat"} }, "not strictly increasing"},
		{"duplicate", func(s *statsBody) { s.terms = []string{"cat", "cat"} }, "not strictly increasing"},
		{"prefix too long", func(s *statsBody) { s.prefix = []uint64{0, 4}; s.terms[1] = "cats" + "x" }, "prefix 4 longer"},
		{"df sum above tokens", func(s *statsBody) { s.tokens = 2 }, "more than the 2 tokens"},
		{"trailing", func(s *statsBody) { s.trailing = []byte{0} }, "trailing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validStatsBody()
			tt.mutate(&s)
			_, err := LoadLexical(s.encode())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestLoadLexicalRejectsHugeVocabularyClaim(t *testing.T) {
	s := validStatsBody()
	s.terms, s.df = nil, nil
	data := s.encode()
	// Replace the vocabulary size 0 (last body byte) by a huge varint.
	body := binary.AppendUvarint(slices.Clone(data[:len(data)-5]), 1<<40)
	body = binary.LittleEndian.AppendUint32(body, crc32.ChecksumIEEE(body))
	if _, err := LoadLexical(body); err == nil || !strings.Contains(err.Error(), "exceeds the data") {
		t.Fatalf("error %v", err)
	}
}

func TestLoadLexicalRejectsForeignData(t *testing.T) {
	for _, data := range [][]byte{nil, []byte("PRL"), []byte(`{"version":1}`)} {
		if _, err := LoadLexical(data); err == nil {
			t.Errorf("accepted %q", data)
		}
	}
}
