package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// errorWriter writes an error answer in the shape of one protocol.
type errorWriter func(w http.ResponseWriter, code int, msg string)

// queryHandler answers one retrieving request of a protocol from l, by
// ctx's deadline: it decodes the request's body, calls Server.query and
// shapes its answer.
type queryHandler[T any] func(ctx context.Context, r *http.Request, body []byte, l *loaded) (T, error)

// serveQuery answers a POST that retrieves, whatever its protocol: it
// refuses other methods (405) and requests before a bundle is loaded
// (503), reads the body (see receiveBody) and then admits the request,
// runs handle in its slot under the request timeout, answers a request
// refused by admission control with 503 or 429 and Retry-After, any other
// failure with its status code, and success with handle's answer as JSON.
// Every error is written by writeErr.
func serveQuery[T any](s *Server, w http.ResponseWriter, r *http.Request, writeErr errorWriter, handle queryHandler[T]) {
	l := s.admitMethod(w, r, writeErr, http.MethodPost)
	if l == nil {
		return
	}
	// The request timeout runs from when the request is handled, queueing
	// included, and the search itself stops at it, so a 504 is written
	// well before the server's write timeout.
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
	defer cancel()
	resp, err := admitted(ctx, s, w, r, l, handle)
	var over *overloadError
	if errors.As(err, &over) {
		s.overloaded(w, over, writeErr)
		return
	}
	if err != nil {
		writeErr(w, statusOf(err), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// admitted receives the body, then takes a slot in the lane its length
// sends it to and runs handle in it. A request its lane would refuse at
// once is refused before its body is read (see refuseUnread).
func admitted[T any](ctx context.Context, s *Server, w http.ResponseWriter, r *http.Request, l *loaded, handle queryHandler[T]) (T, error) {
	var none T
	if err := s.refuseUnread(w, r); err != nil {
		return none, err
	}
	body, release, err := s.receiveBody(w, r)
	if err != nil {
		return none, err
	}
	defer release()
	var t *ticket
	err = stage(ctx, "parentrag.admission", func(ctx context.Context) (err error) {
		t, err = s.admit.take(ctx, s.admit.heavyBody(int64(len(body))))
		return err
	})
	if err != nil {
		return none, err
	}
	defer t.done()
	return handle(withTicket(ctx, t), r, body, l)
}

// serveDescription answers a GET that describes the loaded bundle, in
// the shape of one protocol: other methods are 405 and a server with no
// bundle 503, both written by writeErr, as is describe's error.
func serveDescription[T any](s *Server, w http.ResponseWriter, r *http.Request, writeErr errorWriter, describe func(r *http.Request, l *loaded) (T, error)) {
	l := s.admitMethod(w, r, writeErr, http.MethodGet, http.MethodHead)
	if l == nil {
		return
	}
	resp, err := describe(r, l)
	if err != nil {
		writeErr(w, statusOf(err), err.Error())
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// admitMethod returns the loaded bundle for a request of one of methods.
// It answers 405 with Allow to another method and 503 while no bundle is
// loaded, both written by writeErr, and then returns nil.
func (s *Server) admitMethod(w http.ResponseWriter, r *http.Request, writeErr errorWriter, methods ...string) *loaded {
	if !slices.Contains(methods, r.Method) {
		w.Header().Set("Allow", strings.Join(methods, ", "))
		writeErr(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed: use %s", r.Method, methods[0]))
		return nil
	}
	l := s.loaded.Load()
	if l == nil {
		writeErr(w, http.StatusServiceUnavailable, "no index loaded yet")
	}
	return l
}
