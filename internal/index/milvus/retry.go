package milvus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/milvus-io/milvus/pkg/v2/util/merr"
)

// Errors of the Milvus store. Each is wrapped with context, so match them
// with errors.Is; the Milvus client's own error stays in the chain too
// (errors.Is(err, merr.ErrCollectionNotFound) works).
var (
	// ErrInvalidConfig reports a Config that cannot work.
	ErrInvalidConfig = errors.New("invalid milvus config")
	// ErrUnavailable reports a transient failure that outlasted the retry
	// policy: Milvus unreachable, overloaded or still loading.
	ErrUnavailable = errors.New("milvus unavailable")
	// ErrSchemaMismatch reports an existing collection (or index) that
	// differs from what the Config asks for.
	ErrSchemaMismatch = errors.New("collection schema mismatch")
	// ErrRowCount reports a collection whose row count differs from the
	// number of children that were indexed.
	ErrRowCount = errors.New("row count mismatch")
	// ErrAliased reports a collection that an alias still points at, which
	// must not be dropped.
	ErrAliased = errors.New("collection is the target of an alias")
	// ErrNotFound reports a collection that does not exist.
	ErrNotFound = errors.New("collection not found")
)

// transientMilvus are Milvus errors worth retrying.
var transientMilvus = []error{
	merr.ErrServiceNotReady,
	merr.ErrServiceUnavailable,
	merr.ErrServiceTooManyRequests,
	merr.ErrServiceRateLimit,
	merr.ErrServiceResourceInsufficient,
	merr.ErrServiceTimeTickLongDelay,
	merr.ErrCollectionNotFullyLoaded,
	merr.ErrCollectionOnRecovering,
	merr.ErrPartitionNotFullyLoaded,
	merr.ErrReplicaNotAvailable,
	merr.ErrChannelNotAvailable,
	merr.ErrNodeNotAvailable,
	merr.ErrSegmentNotLoaded,
	merr.ErrInconsistentRequery,
}

// transient reports whether err is worth retrying: a gRPC Unavailable,
// DeadlineExceeded, ResourceExhausted or Aborted from the server, or a
// Milvus error that says to come back later.
func transient(err error) bool {
	if err == nil {
		return false
	}
	if st, ok := status.FromError(err); ok {
		switch st.Code() {
		case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Aborted:
			return true
		}
	}
	// A context error of the caller is not transient: the caller gave up.
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	for _, t := range transientMilvus {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// retry runs fn until it succeeds, fails for good, the policy runs out or
// ctx ends. fn gets the attempt number, from 1. A transient error that
// outlasts the policy is wrapped with ErrUnavailable.
func (s *Store) retry(ctx context.Context, fn func(ctx context.Context, attempt int) error) error {
	wait := s.cfg.Retry.Backoff
	for attempt := 1; ; attempt++ {
		err := fn(ctx, attempt)
		if err == nil {
			return nil
		}
		if !transient(err) {
			return err
		}
		if attempt >= s.cfg.Retry.Attempts {
			return fmt.Errorf("%w after %d attempts: %w", ErrUnavailable, attempt, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (gave up waiting to retry: %w): %w", ErrUnavailable, ctx.Err(), err)
		case <-t.C:
		}
		wait = min(2*wait, s.cfg.Retry.MaxBackoff)
	}
}
