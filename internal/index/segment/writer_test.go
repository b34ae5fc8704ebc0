package segment_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/index/segment"
)

// TestResetWriterWritesAsANewOne checks that a writer emptied by Reset
// writes each next segment byte for byte as a new writer does, whether
// or not the segment before it had contexts, was larger or smaller, or
// ended on an analysis the writer refused.
func TestResetWriterWritesAsANewOne(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	corpus := analyse(randomCorpus(rng, 900))
	w := segment.NewWriter(true)
	lo := 0
	for i, hi := range []int{300, 310, 700, 900} {
		contexts := i != 2
		w.Reset(contexts)
		got := writeParents(t, w, corpus, lo, hi)
		if want := writeParents(t, segment.NewWriter(contexts), corpus, lo, hi); !bytes.Equal(got, want) {
			t.Fatalf("segment %d (parents %d to %d, contexts %v): a reset writer wrote %d bytes unlike a new writer's %d", i, lo, hi, contexts, len(got), len(want))
		}
		refused := bm25.Analysis{Terms: []string{"zzz-refused"}, Counts: []uint32{0}, Tokens: 1}
		if err := w.AddChild("refused", 0, refused); err == nil {
			t.Fatal("a zero count was accepted")
		}
		lo = hi
	}
}
