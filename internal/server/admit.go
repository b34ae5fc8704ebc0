package server

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// Reasons of parentrag_requests_rejected_total.
const (
	// rejectQueueFull: every slot was busy and the queue was full.
	rejectQueueFull = "queue_full"
	// rejectQueueWait: the request waited QueueWait without a slot.
	rejectQueueWait = "queue_wait"
	// rejectTooCostly: the query was over MaxQueryTerms or MaxPostings.
	rejectTooCostly = "query_too_costly"
	// rejectTimeout: the retrieval ran past the request timeout (504).
	rejectTimeout = "timeout"
)

// retryAfter is what Retry-After says to a request refused for overload.
const retryAfter = 1 * time.Second

// admission bounds the retrievals in flight: at most cap(slots) run at
// once, at most maxQueued more wait, each for at most wait.
type admission struct {
	slots     chan struct{}
	maxQueued int64
	wait      time.Duration
	queued    atomic.Int64
}

func newAdmission(inFlight, queued int, wait time.Duration) *admission {
	return &admission{slots: make(chan struct{}, inFlight), maxQueued: int64(queued), wait: wait}
}

// acquire takes a slot, waiting in the queue while there is room in it, up
// to the wait or until ctx is done. It returns a release function, or the
// reason the request is refused.
func (a *admission) acquire(ctx context.Context) (release func(), reason string) {
	select {
	case a.slots <- struct{}{}:
		return a.release, ""
	default:
	}
	if a.queued.Add(1) > a.maxQueued {
		a.queued.Add(-1)
		return nil, rejectQueueFull
	}
	defer a.queued.Add(-1)
	timer := time.NewTimer(a.wait)
	defer timer.Stop()
	select {
	case a.slots <- struct{}{}:
		return a.release, ""
	case <-timer.C:
		return nil, rejectQueueWait
	case <-ctx.Done():
		return nil, rejectQueueWait
	}
}

func (a *admission) release() { <-a.slots }

// inFlight is how many retrievals hold a slot.
func (a *admission) inFlight() int { return len(a.slots) }

// overloaded answers a request refused by admission: 503 with Retry-After,
// the error written by writeErr.
func (s *Server) overloaded(w http.ResponseWriter, reason string, writeErr errorWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter/time.Second)))
	writeErr(w, http.StatusServiceUnavailable, s.refusal(reason))
}

// refusal counts a request refused by admission for reason and returns
// the message that tells its client.
func (s *Server) refusal(reason string) string {
	s.metrics.rejected.WithLabelValues(reason).Inc()
	msg := "server overloaded: all %d query slots are busy and the queue is full; retry later"
	if reason == rejectQueueWait {
		msg = "server overloaded: no query slot of %d freed within the queue wait; retry later"
	}
	return sprintf(msg, cap(s.admit.slots))
}
