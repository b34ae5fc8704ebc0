package indexjob

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/retrieval/build"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
	"github.com/parentrag/parentrag/internal/retrieval/embed"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
	"github.com/parentrag/parentrag/internal/rollout"
	"github.com/parentrag/parentrag/internal/telemetry"
)

// VerificationStatus records the result of rollout.Verify.
func VerificationStatus(v rollout.Verification, err error) *v1alpha1.VerificationStatus {
	if err != nil {
		out := FailedVerification(err)
		out.Children, out.Parents, out.SampledQueries, out.ResolvedChildren = v.Children, v.Parents, v.SampledQueries, v.ResolvedChildren
		return out
	}
	return &v1alpha1.VerificationStatus{
		Result: v1alpha1.CheckPassed, Children: v.Children, Parents: v.Parents,
		SampledQueries: v.SampledQueries, ResolvedChildren: v.ResolvedChildren, CheckedAt: metav1.NewTime(time.Now()),
		Message: fmt.Sprintf("stores hold %d children and %d parents as the manifest says; %d sample queries answered, %d hit children resolved to parents of the revision",
			v.Children, v.Parents, v.SampledQueries, v.ResolvedChildren),
	}
}

// FailedVerification records a check that failed.
func FailedVerification(err error) *v1alpha1.VerificationStatus {
	return &v1alpha1.VerificationStatus{Result: v1alpha1.CheckFailed, Message: err.Error(), CheckedAt: metav1.NewTime(time.Now())}
}

// MeasureGate runs the golden queries on candidate and, when active is not
// nil, on active in the same run, and records the result with the active
// revision's name and the golden queries' digest. The operator and the
// Job measure a gate with it alone. The queries are not traced one by one
// (telemetry.Silence): the gate's span counts them.
func MeasureGate(ctx context.Context, golden []rollout.GoldenQuery, spec rollout.GateSpec, candidate, active *retrieve.Retriever, activeName, digest string) (*v1alpha1.QualityGateStatus, error) {
	res, err := rollout.EvaluateGate(telemetry.Silence(ctx), golden, candidate, active, spec)
	if err != nil {
		return nil, err
	}
	return GateStatus(res, activeName, digest), nil
}

// GateStatus records a quality gate result.
func GateStatus(res rollout.GateResult, activeName, digest string) *v1alpha1.QualityGateStatus {
	out := &v1alpha1.QualityGateStatus{
		Result: v1alpha1.CheckResult(res.Outcome), Queries: res.Queries, CandidateHitRate: rate(res.CandidateHitRate),
		Errors: res.Errors, Misses: res.Misses, Message: res.Message, Digest: digest, EvaluatedAt: metav1.NewTime(time.Now()),
	}
	if res.HasActive {
		out.ActiveHitRate, out.ActiveRevision = rate(res.ActiveHitRate), activeName
	}
	if len(out.Misses) > 5 {
		out.Misses = out.Misses[:5]
	}
	return out
}

// rate formats a hit rate for status.
func rate(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) }

// CacheStatus reports what a build's embedding cache saved, nil without
// one.
func CacheStatus(cache *embed.Cached) *v1alpha1.EmbeddingCacheStatus {
	if cache == nil {
		return nil
	}
	st := cache.Stats()
	return &v1alpha1.EmbeddingCacheStatus{Hits: st.Hits, Misses: st.Misses, HitRate: strconv.FormatFloat(st.HitRate(), 'f', 3, 64)}
}

// UnitStatus reports what a build's unit cache saved: how many of its
// documents came from the cache, the others split again, and for a build
// into segments how many of its runs were reused and built.
func UnitStatus(built build.Built) *v1alpha1.UnitCacheStatus {
	st := &v1alpha1.UnitCacheStatus{Reused: built.Reused, Split: built.Manifest.Documents - built.Reused}
	if built.Runs != nil {
		st.Segments = &v1alpha1.SegmentRunsStatus{Reused: built.Runs.Reused, Built: built.Runs.Built}
	}
	return st
}

// Verify checks a revision as it was opened: the error of opening it, or
// the opened bundle. What speaks against the revision (a count mismatch,
// a failed check) is recorded as a failed verification; an error that
// says nothing about it (cancelled, a store out of reach, dir unreadable)
// is returned, so that the check runs again. dir is left out of messages.
// Its sample queries are not traced one by one (telemetry.Silence).
func Verify(ctx context.Context, dir string, b *bundle.Bundle, openErr error) (*v1alpha1.VerificationStatus, error) {
	if openErr != nil {
		if !errors.Is(openErr, bundle.ErrCountMismatch) {
			return nil, openErr
		}
		return FailedVerification(errors.New(strings.TrimPrefix(openErr.Error(), dir+": "))), nil
	}
	v, err := rollout.Verify(telemetry.Silence(ctx), b, rollout.VerifyOptions{})
	if err != nil && (ctx.Err() != nil || errors.Is(err, rollout.ErrCouldNotCheck)) {
		return nil, err
	}
	return VerificationStatus(v, err), nil
}
