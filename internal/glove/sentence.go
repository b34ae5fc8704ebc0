package glove

import (
	"fmt"
	"math"
	"strings"
	"unicode"
)

// Pooling names how a sentence's word vectors become one vector.
type Pooling string

const (
	// Mean is the plain mean of the known words' vectors.
	Mean Pooling = "mean"
	// SIF is the smooth inverse frequency mean of Arora, Liang and Ma
	// (ICLR 2017): each word weighs a/(a + p(w)), with a = 1e-3 and p(w)
	// the word's share of running text estimated from its frequency rank
	// (Zipf's law), so that frequent words count little; then the
	// component along the vocabulary's common direction (the SIF mean of
	// the whole vocabulary, weighted by frequency) is removed.
	SIF Pooling = "sif"
)

// sifA is SIF's smoothing parameter; the paper finds 1e-3 to 1e-4 best.
const sifA = 1e-3

// ParsePooling reads a pooling name.
func ParsePooling(s string) (Pooling, error) {
	switch p := Pooling(strings.ToLower(s)); p {
	case Mean, SIF:
		return p, nil
	}
	return "", fmt.Errorf("glove: unknown pooling %q (want mean or sif)", s)
}

// Encoder turns texts into unit sentence vectors with one pooling.
type Encoder struct {
	model   *Model
	pooling Pooling
	weights []float32 // SIF weight per rank; nil for Mean
	common  []float32 // unit common direction removed by SIF
}

// NewEncoder prepares an encoder of m; SIF computes its weights and
// common direction once.
func NewEncoder(m *Model, p Pooling) (*Encoder, error) {
	if _, err := ParsePooling(string(p)); err != nil {
		return nil, err
	}
	e := &Encoder{model: m, pooling: p}
	if p == SIF {
		e.weights, e.common = sifTables(m)
	}
	return e, nil
}

// zipfShare estimates the share of running text of the word of a rank,
// 1/((rank+1)·H) with H the harmonic number of the vocabulary's size.
func zipfShare(rank, n int) float64 {
	h := math.Log(float64(n)) + 0.5772156649
	return 1 / (float64(rank+1) * h)
}

// sifTables computes each rank's SIF weight and the unit common direction.
func sifTables(m *Model) ([]float32, []float32) {
	n := m.Words()
	weights := make([]float32, n)
	common := make([]float64, m.dims)
	for r := range n {
		p := zipfShare(r, n)
		w := sifA / (sifA + p)
		weights[r] = float32(w)
		for i, x := range m.row(int32(r)) {
			common[i] += p * w * float64(x)
		}
	}
	return weights, unit(common)
}

// Dimensions is the length of every vector Encode returns.
func (e *Encoder) Dimensions() int { return e.model.dims }

// Encode returns text's unit sentence vector and how many of its words
// the model knew. A text with no known word gets the zero vector.
func (e *Encoder) Encode(text string) ([]float32, int) {
	sum := make([]float64, e.model.dims)
	known := 0
	for _, word := range Words(text) {
		r, ok := e.model.rank(word)
		if !ok {
			continue
		}
		known++
		w := float64(1)
		if e.weights != nil {
			w = float64(e.weights[r])
		}
		for i, x := range e.model.row(r) {
			sum[i] += w * float64(x)
		}
	}
	if known == 0 {
		return make([]float32, e.model.dims), 0
	}
	if e.common != nil {
		var dot float64
		for i, c := range e.common {
			dot += sum[i] * float64(c)
		}
		for i, c := range e.common {
			sum[i] -= dot * float64(c)
		}
	}
	return unit(sum), known
}

// unit scales v to length 1 (a zero vector stays zero) as float32.
func unit(v []float64) []float32 {
	var n float64
	for _, x := range v {
		n += x * x
	}
	out := make([]float32, len(v))
	if n == 0 {
		return out
	}
	n = math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(x / n)
	}
	return out
}

// Words splits text as GloVe's vocabulary is written: lower case, runs of
// letters and digits. Punctuation and symbols separate words and are
// dropped.
func Words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
