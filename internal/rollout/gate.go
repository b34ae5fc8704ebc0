package rollout

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// Outcome is the decision of a quality gate.
type Outcome string

const (
	// OutcomePassed: the candidate may be promoted.
	OutcomePassed Outcome = "Passed"
	// OutcomeFailed: the candidate answers too few golden queries, or
	// clearly fewer than the active revision.
	OutcomeFailed Outcome = "Failed"
	// OutcomeInconclusive: the hit rate could not be measured (a query
	// failed, or too few were evaluated); neither pass nor fail.
	OutcomeInconclusive Outcome = "Inconclusive"
)

// DefaultMinQueries is GateSpec.MinQueries when it is not set.
const DefaultMinQueries = 1

// maxMisses is how many missed golden queries GateResult lists.
const maxMisses = 5

// GateSpec is what a candidate must achieve.
type GateSpec struct {
	// MinHitRate: the candidate's hit rate must be at least this (0..1).
	MinHitRate float64
	// MaxDrop: the active hit rate minus the candidate's must be at most
	// this; below 0 means no limit.
	MaxDrop float64
	// MinQueries: fewer evaluated queries than this is Inconclusive
	// (default 1).
	MinQueries int
	// Options tune every query, on both revisions (MaxParents etc.).
	Options retrieve.Options
}

// minQueries returns MinQueries, or DefaultMinQueries when not positive.
func (s GateSpec) minQueries() int {
	if s.MinQueries <= 0 {
		return DefaultMinQueries
	}
	return s.MinQueries
}

// validate refuses thresholds that cannot be compared with a hit rate.
func (s GateSpec) validate() error {
	if math.IsNaN(s.MinHitRate) || s.MinHitRate < 0 || s.MinHitRate > 1 {
		return fmt.Errorf("minimum hit rate %v is not between 0 and 1", s.MinHitRate)
	}
	if math.IsNaN(s.MaxDrop) {
		return errors.New("maximum drop is not a number")
	}
	return nil
}

// GateResult is a quality gate's measurement and decision.
type GateResult struct {
	Outcome Outcome
	// Queries is how many golden queries were evaluated on both revisions
	// (on the candidate alone without an active revision).
	Queries int
	// CandidateHits and ActiveHits count the evaluated queries each
	// revision answered.
	CandidateHits, ActiveHits int
	// CandidateHitRate and ActiveHitRate are hits/Queries (0 without
	// queries).
	CandidateHitRate, ActiveHitRate float64
	// HasActive is false when there was no active revision to compare
	// with (the first revision): the drop is not checked.
	HasActive bool
	// Errors counts queries that failed on either revision.
	Errors int
	// Misses lists up to 5 golden queries the candidate missed, in order.
	Misses []string
	// Message says in one sentence what was measured and decided.
	Message string
}

// EvaluateGate runs every golden query on the candidate and, when active is
// not nil, on the active retriever in the same run, query by query, so
// both are measured under the same conditions. It decides: a query error
// on either side, or fewer evaluated queries than MinQueries, is
// Inconclusive; a candidate hit rate below MinHitRate, or a drop from the
// active hit rate above MaxDrop, is Failed; anything else Passed. Rates
// equal to a threshold pass. A cancelled ctx returns ctx.Err(); an invalid
// spec or a nil candidate is an error.
func EvaluateGate(ctx context.Context, golden []GoldenQuery, candidate, active *retrieve.Retriever, spec GateSpec) (GateResult, error) {
	if candidate == nil {
		return GateResult{}, errors.New("no candidate retriever to evaluate")
	}
	if err := spec.validate(); err != nil {
		return GateResult{}, err
	}
	run := gateRun{GateResult: GateResult{HasActive: active != nil}}
	for _, q := range golden {
		if err := ctx.Err(); err != nil {
			return GateResult{}, err
		}
		if err := run.query(ctx, q, candidate, active, spec.Options); err != nil {
			return GateResult{}, err
		}
	}
	return run.decide(spec), nil
}

// gateRun accumulates the measurement of one EvaluateGate call.
type gateRun struct {
	GateResult
	// firstFailure describes the first query that failed, for Message.
	firstFailure error
}

// query evaluates q on the candidate, then on the active revision, and
// counts it as evaluated only when both answered; a failure is counted in
// Errors instead. It returns an error only when ctx is done.
func (g *gateRun) query(ctx context.Context, q GoldenQuery, candidate, active *retrieve.Retriever, opts retrieve.Options) error {
	candidateHit, err := answers(ctx, candidate, q, opts)
	if err != nil {
		return g.failed(ctx, fmt.Errorf("query %q on the candidate: %w", q.Query, err))
	}
	activeHit := false
	if active != nil {
		if activeHit, err = answers(ctx, active, q, opts); err != nil {
			return g.failed(ctx, fmt.Errorf("query %q on the active revision: %w", q.Query, err))
		}
	}
	g.Queries++
	if candidateHit {
		g.CandidateHits++
	} else if len(g.Misses) < maxMisses {
		g.Misses = append(g.Misses, q.Query)
	}
	if activeHit {
		g.ActiveHits++
	}
	return nil
}

// failed counts a failed query and keeps the first failure; when ctx is
// done the failure is the cancellation, which it returns instead.
func (g *gateRun) failed(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	g.Errors++
	if g.firstFailure == nil {
		g.firstFailure = err
	}
	return nil
}

// answers reports whether r answers q.
func answers(ctx context.Context, r *retrieve.Retriever, q GoldenQuery, opts retrieve.Options) (bool, error) {
	results, err := r.Retrieve(ctx, q.Query, opts)
	if err != nil {
		return false, err
	}
	return q.hit(results), nil
}
