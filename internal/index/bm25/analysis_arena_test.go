package bm25

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// arenaTexts returns texts of every size, some larger than a block.
func arenaTexts() []string {
	var long strings.Builder
	for i := range 6000 {
		fmt.Fprintf(&long, "term%d ", i)
	}
	texts := []string{"", "one two two three", long.String()}
	for i := range 40 {
		texts = append(texts, strings.Repeat(fmt.Sprintf("w%d x%d ", i, i%7), 1+i*17))
	}
	return texts
}

// Analyses taken from an arena are what a map counts, each holding
// exactly its terms: appending to one never writes into another's. Once
// reset, the arena fills the same blocks again, and the analyses taken
// after are as right as the first.
func TestArenaHandsOutDisjointAnalysesAndReusesItsBlocks(t *testing.T) {
	var arena AnalysisArena
	var s AnalysisScratch
	s.UseArena(&arena)
	texts := arenaTexts()
	var first *string // the first block's memory
	for round := range 3 {
		var got []Analysis
		for _, text := range texts {
			got = append(got, s.AnalyzeCounts(text))
		}
		blocks := len(arena.blocks)
		if round == 0 {
			first = &arena.blocks[0].terms[:1][0]
		} else if &arena.blocks[0].terms[:1][0] != first {
			t.Fatalf("round %d: the arena allocated a new first block after a reset", round)
		}
		for i := range got {
			if cap(got[i].Terms) != len(got[i].Terms) || cap(got[i].Counts) != len(got[i].Counts) {
				t.Fatalf("round %d, text %d: arrays have room beyond their terms", round, i)
			}
			got[i].Terms = append(got[i].Terms, "overwritten?")
			got[i].Counts = append(got[i].Counts, 99)
		}
		for i, text := range texts {
			want := naiveCounts(text)
			a := got[i]
			a.Terms, a.Counts = a.Terms[:len(a.Terms)-1], a.Counts[:len(a.Counts)-1]
			if len(want.Terms) == 0 {
				want.Terms, want.Counts = []string{}, []uint32{}
			}
			if !reflect.DeepEqual(a, want) {
				t.Fatalf("round %d, text %d: %d terms unlike a map's %d", round, i, len(a.Terms), len(want.Terms))
			}
		}
		arena.Reset()
		if round > 0 && len(arena.blocks) != blocks {
			t.Fatalf("round %d: the arena grew to %d blocks from %d, after a reset", round, len(arena.blocks), blocks)
		}
	}
}

// A scratch's own arena, never reset, keeps only the block it fills: the
// blocks it filled before belong to their analyses alone.
func TestOwnArenaLetsGoOfFullBlocks(t *testing.T) {
	var s AnalysisScratch
	for range 20 {
		for _, text := range arenaTexts() {
			s.AnalyzeCounts(text)
		}
	}
	if len(s.own.blocks) != 1 {
		t.Fatalf("the scratch's own arena holds %d blocks, want the one it fills", len(s.own.blocks))
	}
}
