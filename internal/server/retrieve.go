package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// RetrieveRequest is the body of POST /v1/retrieve. Omitted fields take the
// server's defaults.
type RetrieveRequest struct {
	// Query is the question; required and not blank.
	Query string `json:"query"`
	// MaxParents caps the parents returned: 1 to 20.
	MaxParents *int `json:"maxParents,omitempty"`
	// ChildTopK is how many children are searched first: 1 to 1000.
	ChildTopK *int `json:"childTopK,omitempty"`
	// Aggregation is Max, Mean or Sum.
	Aggregation string `json:"aggregation,omitempty"`
	// Budget caps the returned text in the index's length unit; 0, the
	// default, means no cap.
	Budget int `json:"budget,omitempty"`
	// Filter restricts the parents returned.
	Filter *Filter `json:"filter,omitempty"`
	// Mode is Parents (each hit child's parent) or Adaptive (the unit of
	// the level that holds enough of the evidence).
	Mode string `json:"mode,omitempty"`
}

// RetrieveResponse is the answer to POST /v1/retrieve: the revision that
// answered and at most maxParents parents, best first (never null).
type RetrieveResponse struct {
	Revision string            `json:"revision"`
	Results  []retrieve.Result `json:"results"`
}

// ErrorResponse is the body of every 4xx and 5xx answer of /v1/retrieve.
type ErrorResponse struct {
	Error string `json:"error"`
}

// httpError is an error with the status code it is answered with.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

// badRequest returns a 400 error.
func badRequest(format string, args ...any) error {
	return &httpError{code: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

// retrieve answers POST /v1/retrieve.
func (s *Server) retrieve(w http.ResponseWriter, r *http.Request) {
	serveQuery(s, w, r, writeError, s.answer)
}

// answer decodes the request and retrieves from l.
func (s *Server) answer(ctx context.Context, _ *http.Request, body []byte, l *loaded) (*RetrieveResponse, error) {
	var req RetrieveRequest
	if err := decodeStrictJSON(body, "", requestShape, &req); err != nil {
		return nil, err
	}
	return s.query(ctx, l, &req)
}

// query validates req, analyses its query and retrieves from l: the one
// retrieval every protocol's endpoint makes. It runs in the slot ctx's
// ticket holds (see serveQuery), or takes one itself when the caller read
// the body without one (MCP); a query whose terms reach more postings than
// the index's heavy limit (see costLimits) moves to the heavy lane before
// it is searched. The search stops
// at ctx's deadline, the request timeout.
func (s *Server) query(ctx context.Context, l *loaded, req *RetrieveRequest) (*RetrieveResponse, error) {
	opts, err := s.options(req, l)
	if err != nil {
		return nil, err
	}
	t := ticketOf(ctx)
	if t == nil {
		err = stage(ctx, "parentrag.admission", func(ctx context.Context) (err error) {
			t, err = s.admit.take(ctx, false)
			return err
		})
		if err != nil {
			return nil, err
		}
		defer t.done()
	}
	var q *retrieve.Query
	err = stage(ctx, "parentrag.analyze", func(ctx context.Context) (err error) {
		q, err = l.bundle.Retriever.Analyze(ctx, req.Query)
		return err
	})
	if err == nil {
		err = opts.CheckCost(q)
	}
	if err != nil {
		return nil, s.retrievalError(ctx, err)
	}
	if !t.heavy && s.admit.heavyQuery(q, l.cost.heavy) {
		if err := s.admit.moveToHeavy(ctx, t); err != nil {
			return nil, err
		}
	}
	s.metrics.inFlight.Inc()
	defer s.metrics.inFlight.Dec()
	if s.beforeRetrieve != nil {
		s.beforeRetrieve(ctx)
	}
	results, err := search(ctx, l.bundle.Retriever, q, opts, req.Filter)
	if err != nil {
		return nil, s.retrievalError(ctx, err)
	}
	if results == nil {
		results = []retrieve.Result{}
	}
	return &RetrieveResponse{Revision: l.bundle.Manifest.Revision, Results: results}, nil
}

// options validates req and merges it with the server's defaults.
func (s *Server) options(req *RetrieveRequest, l *loaded) (retrieve.Options, error) {
	opts := s.opts.Defaults
	if strings.TrimSpace(req.Query) == "" {
		return opts, badRequest("query is required")
	}
	if req.MaxParents != nil {
		opts.MaxParents = *req.MaxParents
	}
	if req.ChildTopK != nil {
		opts.ChildTopK = *req.ChildTopK
	}
	if req.Aggregation != "" {
		opts.Aggregation = retrieve.Aggregation(req.Aggregation)
	}
	if req.Mode != "" {
		opts.Mode = retrieve.Mode(req.Mode)
	}
	opts.Budget = req.Budget
	opts.MaxQueryTerms = max(s.opts.MaxQueryTerms, 0)
	opts.MaxPostings = l.cost.max
	if err := checkOptions(opts); err != nil {
		return opts, err
	}
	if opts.Budget > 0 {
		if l.lengthErr != nil {
			return opts, &httpError{code: http.StatusInternalServerError, msg: fmt.Sprintf("budget unavailable: %v", l.lengthErr)}
		}
		opts.Length = l.length
	}
	return opts, nil
}

// checkOptions refuses values out of range.
func checkOptions(opts retrieve.Options) error {
	switch {
	case opts.MaxParents < 1 || opts.MaxParents > MaxMaxParents:
		return badRequest("maxParents %d: want 1 to %d", opts.MaxParents, MaxMaxParents)
	case opts.ChildTopK < 1 || opts.ChildTopK > MaxChildTopK:
		return badRequest("childTopK %d: want 1 to %d", opts.ChildTopK, MaxChildTopK)
	case opts.Aggregation != retrieve.AggregateMax && opts.Aggregation != retrieve.AggregateMean && opts.Aggregation != retrieve.AggregateSum:
		return badRequest("aggregation %q: want Max, Mean or Sum", opts.Aggregation)
	case opts.Budget < 0:
		return badRequest("budget %d: want 0 (no cap) or more", opts.Budget)
	case opts.Mode != "" && opts.Mode != retrieve.ModeParents && opts.Mode != retrieve.ModeAdaptive:
		return badRequest("mode %q: want Parents or Adaptive", opts.Mode)
	}
	return nil
}

// retrievalError classifies a failed retrieval: past the request timeout
// is 504, a cancelled request 503, a query over a cost limit or a budget
// too small for any text 400, anything else 500.
func (s *Server) retrievalError(ctx context.Context, err error) error {
	var small *retrieve.BudgetTooSmallError
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		s.metrics.rejected.WithLabelValues(rejectTimeout).Inc()
		return &httpError{code: http.StatusGatewayTimeout, msg: fmt.Sprintf("retrieval timed out after %s", s.opts.RequestTimeout)}
	case ctx.Err() != nil:
		return &httpError{code: http.StatusServiceUnavailable, msg: "request cancelled"}
	case errors.Is(err, retrieve.ErrQueryTooCostly):
		s.metrics.rejected.WithLabelValues(rejectTooCostly).Inc()
		return badRequest("%s; shorten the query", strings.TrimPrefix(strings.TrimPrefix(err.Error(), "searching children: "), "search: "))
	case errors.As(err, &small):
		return badRequest("%s", small.Error())
	}
	return &httpError{code: http.StatusInternalServerError, msg: fmt.Sprintf("retrieval failed: %v", err)}
}

// statusOf returns the status code err is answered with.
func statusOf(err error) int {
	var he *httpError
	if errors.As(err, &he) {
		return he.code
	}
	return http.StatusInternalServerError
}

// writeError writes an ErrorResponse.
func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, ErrorResponse{Error: msg})
}

// writeJSON writes v as the JSON body of a response with code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
