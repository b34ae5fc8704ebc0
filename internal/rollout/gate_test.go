package rollout

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/parentrag/parentrag/internal/index/vector"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// golden is one golden query per document of corpus, the third judged by
// its answer rather than its document.
func golden() []GoldenQuery {
	return []GoldenQuery{
		{Query: "tacking upwind with a reef in the mainsail", DocIDs: []string{"sailing.txt"}},
		{Query: "tomatoes basil compost mulch", DocIDs: []string{"garden.md"}},
		{Query: "how does promotion move the alias", Answers: []string{"moves the  ALIAS once"}},
		{Query: "sourdough starter rye flour", DocIDs: []string{"bread.md"}},
		{Query: "zeppelin duralumin girders", DocIDs: []string{"airship.md"}},
	}
}

// breadQuery is the golden query only the bread document answers.
const breadQuery = "sourdough starter rye flour"

// retrievers returns a retriever over the whole corpus and one over the
// corpus without the bread document: two real indexes whose hit rates on
// golden differ by exactly one query.
func retrievers(t *testing.T) (full, noBread *retrieve.Retriever) {
	t.Helper()
	return build(t, corpus()).Retriever(), build(t, without(corpus(), "bread.md")).Retriever()
}

// options returns the best parent only, so a hit means it ranked first.
var options = retrieve.Options{MaxParents: 1}

func TestEvaluateGate(t *testing.T) {
	full, noBread := retrievers(t)
	tests := []struct {
		name              string
		candidate, active *retrieve.Retriever
		spec              GateSpec
		want              GateResult
	}{{
		name: "passes", candidate: full, active: full,
		spec: GateSpec{MinHitRate: 0.8, MaxDrop: 0.05},
		want: GateResult{Outcome: OutcomePassed, Queries: 5, CandidateHits: 5, ActiveHits: 5, CandidateHitRate: 1, ActiveHitRate: 1, HasActive: true,
			Message: "candidate hit rate 1.00 (5/5) >= minimum 0.80 (active 1.00, drop 0.00 <= 0.05)"},
	}, {
		name: "better than the active revision", candidate: full, active: noBread,
		spec: GateSpec{MinHitRate: 0.8, MaxDrop: 0},
		want: GateResult{Outcome: OutcomePassed, Queries: 5, CandidateHits: 5, ActiveHits: 4, CandidateHitRate: 1, ActiveHitRate: 0.8, HasActive: true,
			Message: "candidate hit rate 1.00 (5/5) >= minimum 0.80 (active 0.80, drop -0.20 <= 0.00)"},
	}, {
		name: "fails below the minimum hit rate", candidate: noBread, active: full,
		spec: GateSpec{MinHitRate: 0.9, MaxDrop: -1},
		want: GateResult{Outcome: OutcomeFailed, Queries: 5, CandidateHits: 4, ActiveHits: 5, CandidateHitRate: 0.8, ActiveHitRate: 1, HasActive: true,
			Misses: []string{breadQuery}, Message: "hit rate 0.80 (4/5) < minimum 0.90 (active 1.00)"},
	}, {
		name: "fails on the drop from the active revision", candidate: noBread, active: full,
		spec: GateSpec{MinHitRate: 0.5, MaxDrop: 0.1},
		want: GateResult{Outcome: OutcomeFailed, Queries: 5, CandidateHits: 4, ActiveHits: 5, CandidateHitRate: 0.8, ActiveHitRate: 1, HasActive: true,
			Misses: []string{breadQuery}, Message: "candidate hit rate 0.80 (4/5) is 0.20 below the active 1.00, more than the allowed drop 0.10"},
	}, {
		name: "passes at both thresholds exactly", candidate: noBread, active: full,
		spec: GateSpec{MinHitRate: 0.8, MaxDrop: 0.2},
		want: GateResult{Outcome: OutcomePassed, Queries: 5, CandidateHits: 4, ActiveHits: 5, CandidateHitRate: 0.8, ActiveHitRate: 1, HasActive: true,
			Misses: []string{breadQuery}, Message: "candidate hit rate 0.80 (4/5) >= minimum 0.80 (active 1.00, drop 0.20 <= 0.20)"},
	}, {
		name: "no limit on the drop", candidate: noBread, active: full,
		spec: GateSpec{MinHitRate: 0.5, MaxDrop: -1},
		want: GateResult{Outcome: OutcomePassed, Queries: 5, CandidateHits: 4, ActiveHits: 5, CandidateHitRate: 0.8, ActiveHitRate: 1, HasActive: true,
			Misses: []string{breadQuery}, Message: "candidate hit rate 0.80 (4/5) >= minimum 0.50 (active 1.00, drop 0.20, no limit)"},
	}, {
		name: "no active revision: the drop is not checked", candidate: noBread, active: nil,
		spec: GateSpec{MinHitRate: 0.5, MaxDrop: 0},
		want: GateResult{Outcome: OutcomePassed, Queries: 5, CandidateHits: 4, CandidateHitRate: 0.8,
			Misses: []string{breadQuery}, Message: "candidate hit rate 0.80 (4/5) >= minimum 0.50 (no active revision to compare with)"},
	}, {
		name: "no active revision, below the minimum", candidate: noBread, active: nil,
		spec: GateSpec{MinHitRate: 0.81},
		want: GateResult{Outcome: OutcomeFailed, Queries: 5, CandidateHits: 4, CandidateHitRate: 0.8,
			Misses: []string{breadQuery}, Message: "hit rate 0.80 (4/5) < minimum 0.81"},
	}, {
		name: "too few queries", candidate: full, active: full,
		spec: GateSpec{MinHitRate: 0.8, MaxDrop: 0.05, MinQueries: 6},
		want: GateResult{Outcome: OutcomeInconclusive, Queries: 5, CandidateHits: 5, ActiveHits: 5, CandidateHitRate: 1, ActiveHitRate: 1, HasActive: true,
			Message: "only 5 golden queries were evaluated, fewer than the minimum 6"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := EvaluateGate(context.Background(), golden(), tc.candidate, tc.active, tc.spec)
			if err != nil {
				t.Fatalf("EvaluateGate: %v", err)
			}
			assertGate(t, got, tc.want)
		})
	}
}

// assertGate compares results field by field, so a failure names the
// field.
func assertGate(t *testing.T, got, want GateResult) {
	t.Helper()
	if got.Outcome != want.Outcome || got.Message != want.Message {
		t.Errorf("outcome %s %q\nwant    %s %q", got.Outcome, got.Message, want.Outcome, want.Message)
	}
	if got.Queries != want.Queries || got.CandidateHits != want.CandidateHits || got.ActiveHits != want.ActiveHits || got.Errors != want.Errors {
		t.Errorf("queries %d, hits %d/%d, errors %d; want %d, %d/%d, %d",
			got.Queries, got.CandidateHits, got.ActiveHits, got.Errors, want.Queries, want.CandidateHits, want.ActiveHits, want.Errors)
	}
	if got.CandidateHitRate != want.CandidateHitRate || got.ActiveHitRate != want.ActiveHitRate || got.HasActive != want.HasActive {
		t.Errorf("rates %v/%v active %v, want %v/%v active %v",
			got.CandidateHitRate, got.ActiveHitRate, got.HasActive, want.CandidateHitRate, want.ActiveHitRate, want.HasActive)
	}
	if !slices.Equal(got.Misses, want.Misses) {
		t.Errorf("misses %q, want %q", got.Misses, want.Misses)
	}
}

func TestEvaluateGateWithoutGoldenQueriesIsInconclusive(t *testing.T) {
	full, _ := retrievers(t)
	got, err := EvaluateGate(context.Background(), nil, full, full, GateSpec{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Outcome != OutcomeInconclusive || got.Queries != 0 || got.CandidateHitRate != 0 {
		t.Errorf("gate without queries: %+v", got)
	}
}

func TestEvaluateGateIsInconclusiveWhenAQueryFails(t *testing.T) {
	full, noBread := retrievers(t)
	tests := []struct {
		name              string
		candidate, active *retrieve.Retriever
		where             string
	}{
		{"candidate fails", withEmbedder(full, failingEmbedder{Embedder: full.Embedder, fail: "sourdough"}), noBread, "on the candidate"},
		{"active fails", full, withEmbedder(noBread, failingEmbedder{Embedder: noBread.Embedder, fail: "zeppelin"}), "on the active revision"},
		{"first revision fails", withEmbedder(full, failingEmbedder{Embedder: full.Embedder, fail: "zeppelin"}), nil, "on the candidate"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Thresholds every count passes: only the failure decides.
			got, err := EvaluateGate(context.Background(), golden(), tc.candidate, tc.active, GateSpec{MaxDrop: -1})
			if err != nil {
				t.Fatalf("EvaluateGate: %v", err)
			}
			if got.Outcome != OutcomeInconclusive || got.Errors != 1 || got.Queries != 4 {
				t.Errorf("outcome %s, %d errors, %d queries; want Inconclusive, 1, 4", got.Outcome, got.Errors, got.Queries)
			}
			for _, w := range []string{"1 of 5 golden queries failed", tc.where, errEmbedding.Error()} {
				if !strings.Contains(got.Message, w) {
					t.Errorf("message %q does not contain %q", got.Message, w)
				}
			}
		})
	}
}

func TestEvaluateGateInterleavesTheRevisions(t *testing.T) {
	full, noBread := retrievers(t)
	log := &queryLog{}
	candidate := withEmbedder(noBread, recordingEmbedder{Embedder: noBread.Embedder, name: "candidate", log: log})
	active := withEmbedder(full, recordingEmbedder{Embedder: full.Embedder, name: "active", log: log})
	if _, err := EvaluateGate(context.Background(), golden(), candidate, active, GateSpec{}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, q := range golden() {
		want = append(want, "candidate: "+q.Query, "active: "+q.Query)
	}
	if !slices.Equal(log.entries, want) {
		t.Errorf("queries ran in the order\n%q\nwant\n%q", log.entries, want)
	}
}

// cancellingEmbedder cancels its context when it embeds a query
// containing at, then embeds as its inner embedder (which then fails).
type cancellingEmbedder struct {
	embed.Embedder
	at     string
	cancel context.CancelFunc
}

// EmbedQuery cancels before embedding queries containing e.at.
func (e cancellingEmbedder) EmbedQuery(ctx context.Context, text string) (vector.Vector, error) {
	if strings.Contains(text, e.at) {
		e.cancel()
	}
	return e.Embedder.EmbedQuery(ctx, text)
}

func TestEvaluateGateReturnsOnCancellation(t *testing.T) {
	full, _ := retrievers(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := EvaluateGate(ctx, golden(), full, full, GateSpec{}); !errors.Is(err, context.Canceled) {
		t.Errorf("EvaluateGate with a cancelled context: %v", err)
	}
	// Cancelled during a query: the failure is the cancellation, not an
	// Inconclusive gate.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	active := withEmbedder(full, cancellingEmbedder{Embedder: full.Embedder, at: "compost", cancel: cancel})
	if got, err := EvaluateGate(ctx, golden(), full, active, GateSpec{}); !errors.Is(err, context.Canceled) {
		t.Errorf("EvaluateGate cancelled mid-run: %+v, %v", got, err)
	}
}

func TestEvaluateGateRefusesABadSpec(t *testing.T) {
	full, _ := retrievers(t)
	for _, spec := range []GateSpec{{MinHitRate: -0.1}, {MinHitRate: 1.01}, {MinHitRate: math.NaN()}, {MaxDrop: math.NaN()}} {
		if _, err := EvaluateGate(context.Background(), golden(), full, nil, spec); err == nil {
			t.Errorf("EvaluateGate accepted %+v", spec)
		}
	}
	if _, err := EvaluateGate(context.Background(), golden(), nil, full, GateSpec{}); err == nil {
		t.Error("EvaluateGate accepted a nil candidate")
	}
}

// decimal parses a threshold as a person writes it ("0.7"), so the test
// compares with the same float64 a spec would hold.
func decimal(t *testing.T, s string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// decideCounts decides a run of the given counts.
func decideCounts(queries, candidateHits, activeHits int, spec GateSpec) GateResult {
	g := gateRun{GateResult: GateResult{Queries: queries, CandidateHits: candidateHits, ActiveHits: activeHits, HasActive: true}}
	return g.decide(spec)
}

func TestDecideAtEveryDecimalBoundary(t *testing.T) {
	for _, queries := range []int{10, 100} {
		for hits := 0; hits <= queries; hits++ {
			// A minimum equal to the hit rate passes; one query fewer fails.
			minimum := decimal(t, fmt.Sprintf("%.2f", float64(hits)/float64(queries)))
			spec := GateSpec{MinHitRate: minimum, MaxDrop: -1}
			if got := decideCounts(queries, hits, hits, spec); got.Outcome != OutcomePassed {
				t.Errorf("%d/%d against minimum %v: %s", hits, queries, minimum, got.Message)
			}
			if hits > 0 {
				if got := decideCounts(queries, hits-1, hits, spec); got.Outcome != OutcomeFailed {
					t.Errorf("%d/%d against minimum %v: %s", hits-1, queries, minimum, got.Message)
				}
			}
		}
		for active := 0; active <= queries; active++ {
			for candidate := 0; candidate <= active; candidate++ {
				// A drop equal to the limit passes, whatever the rates it
				// lies between (0.9-0.7 is 0.20000000000000007 in floats).
				limit := decimal(t, fmt.Sprintf("%.2f", float64(active-candidate)/float64(queries)))
				spec := GateSpec{MaxDrop: limit}
				if got := decideCounts(queries, candidate, active, spec); got.Outcome != OutcomePassed {
					t.Errorf("%d/%d after %d/%d with drop limit %v: %s", candidate, queries, active, queries, limit, got.Message)
				}
				if candidate > 0 {
					if got := decideCounts(queries, candidate-1, active, spec); got.Outcome != OutcomeFailed {
						t.Errorf("%d/%d after %d/%d with drop limit %v: %s", candidate-1, queries, active, queries, limit, got.Message)
					}
				}
			}
		}
	}
}
