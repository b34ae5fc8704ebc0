package server

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// Reasons of parentrag_requests_rejected_total.
const (
	// rejectQueueFull: every slot was busy and the queue was full.
	rejectQueueFull = "queue_full"
	// rejectQueueWait: the request waited QueueWait without a slot.
	rejectQueueWait = "queue_wait"
	// rejectHeavyBusy: a heavy query found the heavy lane's slots and
	// queue taken.
	rejectHeavyBusy = "heavy_lane_full"
	// rejectTooCostly: the query was over MaxQueryTerms or MaxPostings.
	rejectTooCostly = "query_too_costly"
	// rejectTimeout: the retrieval ran past the request timeout (504).
	rejectTimeout = "timeout"
	// rejectBodyBudget: the request's body would have passed the bytes
	// of bodies the server holds at once (BodyBudget).
	rejectBodyBudget = "body_budget"
)

// retryAfter is what Retry-After says to a request refused for overload.
const retryAfter = 1 * time.Second

// lane bounds the requests of one kind in flight: at most cap(slots) hold
// a slot at once, at most maxQueued more wait, each for at most wait.
// Waiters take freed slots in the order they came (a channel serves its
// blocked senders first in, first out).
type lane struct {
	slots     chan struct{}
	maxQueued int64
	wait      time.Duration
	queued    atomic.Int64
}

func newLane(inFlight, queued int, wait time.Duration) *lane {
	return &lane{slots: make(chan struct{}, inFlight), maxQueued: int64(queued), wait: wait}
}

// acquire takes a slot, waiting in the queue while there is room in it, up
// to the wait or until ctx is done. It returns a release function, or the
// reason the request is refused.
func (a *lane) acquire(ctx context.Context) (release func(), reason string) {
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

func (a *lane) release() { <-a.slots }

// full reports whether every slot and queue place is taken now, so that
// a request would be refused at once.
func (a *lane) full() bool {
	return len(a.slots) == cap(a.slots) && a.queued.Load() >= a.maxQueued
}

// admission keeps heavy queries out of the slots short questions need:
// a request takes a slot in the light lane, or in the small heavy lane
// when its body, read before it is admitted, is over HeavyBodyBytes or its
// terms reach more than HeavyPostings postings (decided after analysis,
// before any search).
type admission struct {
	light, heavy *lane
	heavyBytes   int64
}

func newAdmission(o Options) *admission {
	return &admission{
		light:      newLane(o.MaxInFlight, o.MaxQueued, o.QueueWait),
		heavy:      newLane(o.MaxHeavyInFlight, o.MaxHeavyInFlight, o.QueueWait),
		heavyBytes: o.HeavyBodyBytes,
	}
}

// overloadError is a request refused by admission control.
type overloadError struct {
	reason string
	// heavy is set when the heavy lane refused it.
	heavy bool
}

func (e *overloadError) Error() string { return "overloaded: " + e.reason }

// heavyBody reports whether a request whose body is n bytes goes to the
// heavy lane.
func (a *admission) heavyBody(n int64) bool {
	return a.heavyBytes > 0 && n > a.heavyBytes
}

// heavyQuery reports whether an analysed query goes to the heavy lane:
// its terms reach more postings than the loaded index's limit.
func (a *admission) heavyQuery(q *retrieve.Query, limit int) bool {
	return limit > 0 && q.Postings > limit
}

// acquire takes a slot in the heavy lane or the light one. It returns a
// release function, or an *overloadError.
func (a *admission) acquire(ctx context.Context, heavy bool) (func(), error) {
	l := a.light
	if heavy {
		l = a.heavy
	}
	release, reason := l.acquire(ctx)
	if release == nil {
		if heavy {
			reason = rejectHeavyBusy
		}
		return nil, &overloadError{reason: reason, heavy: heavy}
	}
	return release, nil
}

// ticket is an admitted request's slot: the lane it is in, and how to give
// it back.
type ticket struct {
	heavy   bool
	release func()
}

// done gives the slot back; calling it again does nothing.
func (t *ticket) done() {
	if t.release != nil {
		t.release()
		t.release = nil
	}
}

// take admits a request to the heavy lane or the light one, or refuses it
// with an *overloadError.
func (a *admission) take(ctx context.Context, heavy bool) (*ticket, error) {
	release, err := a.acquire(ctx, heavy)
	if err != nil {
		return nil, err
	}
	return &ticket{heavy: heavy, release: release}, nil
}

// moveToHeavy gives t's light slot back and takes a heavy one in its
// place; refused, t holds no slot.
func (a *admission) moveToHeavy(ctx context.Context, t *ticket) error {
	t.done()
	release, err := a.acquire(ctx, true)
	if err != nil {
		return err
	}
	t.heavy, t.release = true, release
	return nil
}

// ticketKey is the context key of a request's ticket.
type ticketKey struct{}

// withTicket returns ctx carrying t, for Server.query to run in.
func withTicket(ctx context.Context, t *ticket) context.Context {
	return context.WithValue(ctx, ticketKey{}, t)
}

// ticketOf returns the ticket ctx carries, or nil.
func ticketOf(ctx context.Context) *ticket {
	t, _ := ctx.Value(ticketKey{}).(*ticket)
	return t
}

// refuseUnread refuses, before its body is read, a request the lane its
// Content-Length sends it to would refuse at once: every slot and queue
// place is taken. Its body is left unread and its connection closed (the
// server would otherwise read all of it to keep the connection). A
// request of unknown length is read and then admitted by what it holds.
func (s *Server) refuseUnread(w http.ResponseWriter, r *http.Request) error {
	heavy := s.admit.heavyBody(r.ContentLength)
	l := s.admit.light
	if heavy {
		l = s.admit.heavy
	}
	if !l.full() {
		return nil
	}
	w.Header().Set("Connection", "close")
	if heavy {
		return &overloadError{reason: rejectHeavyBusy, heavy: true}
	}
	return &overloadError{reason: rejectQueueFull}
}

// overloaded answers a request refused by admission, with Retry-After:
// 503 when the light lane is full, 429 when the heavy one is; the error is
// written by writeErr.
func (s *Server) overloaded(w http.ResponseWriter, over *overloadError, writeErr errorWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter/time.Second)))
	code := http.StatusServiceUnavailable
	if over.heavy {
		code = http.StatusTooManyRequests
	}
	writeErr(w, code, s.refusal(over))
}

// refusal counts a request refused by admission and returns the message
// that tells its client why.
func (s *Server) refusal(over *overloadError) string {
	s.metrics.rejected.WithLabelValues(over.reason).Inc()
	switch {
	case over.heavy:
		return sprintf("too many heavy queries: all %d slots for queries over %d bytes or %d postings are busy; retry later or shorten the query",
			cap(s.admit.heavy.slots), s.opts.HeavyBodyBytes, s.heavyPostings())
	case over.reason == rejectBodyBudget:
		return sprintf("server overloaded: the %d bytes it holds for request bodies at once are taken; retry later", s.bodies.limit)
	case over.reason == rejectQueueWait:
		return sprintf("server overloaded: no query slot of %d freed within the queue wait; retry later", cap(s.admit.light.slots))
	}
	return sprintf("server overloaded: all %d query slots are busy and the queue is full; retry later", cap(s.admit.light.slots))
}

// defaultOrNone is v with zero meaning def and a negative value 0 (none).
func defaultOrNone[T int | int64](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// heavyPostings is the heavy limit of the loaded index, HeavyPostings
// before one is loaded.
func (s *Server) heavyPostings() int {
	if l := s.loaded.Load(); l != nil {
		return l.cost.heavy
	}
	return s.opts.HeavyPostings
}
