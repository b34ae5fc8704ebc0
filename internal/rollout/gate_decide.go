package rollout

import "fmt"

// rateTolerance absorbs floating-point rounding when a rate is compared
// with a threshold written as a decimal, so that 4/5 meets a minimum of
// 0.8 and 0.9-0.7 stays within a drop of 0.2. Distinct hit rates of fewer
// than 30,000 queries differ by far more, so no real difference is hidden.
const rateTolerance = 1e-9

// decide computes the rates and decides the outcome from the counts, in
// this order: errors, too few queries (both Inconclusive), the minimum
// hit rate, the drop from the active revision (both Failed), else Passed.
func (g *gateRun) decide(spec GateSpec) GateResult {
	r := g.GateResult
	r.CandidateHitRate = rate(r.CandidateHits, r.Queries)
	if r.HasActive {
		r.ActiveHitRate = rate(r.ActiveHits, r.Queries)
	}
	drop := rate(r.ActiveHits-r.CandidateHits, r.Queries)
	switch {
	case r.Errors > 0:
		r.Outcome = OutcomeInconclusive
		r.Message = fmt.Sprintf("%d of %d golden queries failed, so the hit rate cannot be measured; the first: %v",
			r.Errors, r.Errors+r.Queries, g.firstFailure)
	case r.Queries < spec.minQueries():
		r.Outcome = OutcomeInconclusive
		r.Message = fmt.Sprintf("only %d golden queries were evaluated, fewer than the minimum %d", r.Queries, spec.minQueries())
	case r.CandidateHitRate < spec.MinHitRate-rateTolerance:
		r.Outcome = OutcomeFailed
		r.Message = fmt.Sprintf("hit rate %s < minimum %.2f%s", describeRate(r.CandidateHits, r.Queries), spec.MinHitRate, activeNote(r))
	case r.HasActive && spec.MaxDrop >= 0 && drop > spec.MaxDrop+rateTolerance:
		r.Outcome = OutcomeFailed
		r.Message = fmt.Sprintf("candidate hit rate %s is %.2f below the active %.2f, more than the allowed drop %.2f",
			describeRate(r.CandidateHits, r.Queries), drop, r.ActiveHitRate, spec.MaxDrop)
	default:
		r.Outcome = OutcomePassed
		r.Message = fmt.Sprintf("candidate hit rate %s >= minimum %.2f%s", describeRate(r.CandidateHits, r.Queries), spec.MinHitRate, passNote(r, drop, spec))
	}
	return r
}

// rate is hits/queries, 0 without queries. The division is correctly
// rounded, so 4/5 is the same float64 as the literal 0.8.
func rate(hits, queries int) float64 {
	if queries == 0 {
		return 0
	}
	return float64(hits) / float64(queries)
}

// describeRate writes a rate with its fraction, e.g. "0.80 (4/5)", so a
// rate just under a threshold does not read as equal to it.
func describeRate(hits, queries int) string {
	return fmt.Sprintf("%.2f (%d/%d)", rate(hits, queries), hits, queries)
}

// activeNote is " (active 0.85)", or empty without an active revision.
func activeNote(r GateResult) string {
	if !r.HasActive {
		return ""
	}
	return fmt.Sprintf(" (active %.2f)", r.ActiveHitRate)
}

// passNote adds the comparison with the active revision to a pass: the
// drop and its limit, or that there was nothing to compare with.
func passNote(r GateResult, drop float64, spec GateSpec) string {
	switch {
	case !r.HasActive:
		return " (no active revision to compare with)"
	case spec.MaxDrop < 0:
		return fmt.Sprintf(" (active %.2f, drop %.2f, no limit)", r.ActiveHitRate, drop)
	default:
		return fmt.Sprintf(" (active %.2f, drop %.2f <= %.2f)", r.ActiveHitRate, drop, spec.MaxDrop)
	}
}
