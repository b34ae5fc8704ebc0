package server

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// bodyReadTimeout bounds how long a request may take to send its body. The
// body is read before the request takes a query slot, so a slow client
// holds a connection for at most this long, and never a slot.
const bodyReadTimeout = 2 * time.Second

// DefaultBodyBudget is Options.BodyBudget's default.
const DefaultBodyBudget = 16 << 20

// bodyBudget bounds the bytes of request bodies the server holds at once,
// being received or received and not yet answered, counted as they
// arrive: a client that announces a long body and stalls holds only what
// it sent.
type bodyBudget struct {
	limit int64
	held  atomic.Int64
}

// take counts n more bytes held and reports whether they fit in the
// budget; when they do not, nothing is counted.
func (b *bodyBudget) take(n int64) bool {
	if b.held.Add(n) > b.limit {
		b.held.Add(-n)
		return false
	}
	return true
}

// give returns n bytes to the budget.
func (b *bodyBudget) give(n int64) { b.held.Add(-n) }

// errBodyBudget stops a body that would pass the budget.
var errBodyBudget = errors.New("the server's budget for request bodies is spent")

// budgetedReader reads r, counting in held each byte read against budget;
// once a read passes the budget it fails with errBodyBudget.
type budgetedReader struct {
	r      io.Reader
	budget *bodyBudget
	held   int64
}

func (br *budgetedReader) Read(p []byte) (int, error) {
	n, err := br.r.Read(p)
	if n > 0 {
		if !br.budget.take(int64(n)) {
			return 0, errBodyBudget
		}
		br.held += int64(n)
	}
	return n, err
}

// receiveBody reads a request's whole body before the request takes a
// query slot, so that a slot is spent on work and not on waiting for a
// client. It refuses a body over MaxBodyBytes (413), one not received
// within bodyReadTimeout (408), one that would pass the body budget (an
// *overloadError, 503), each closing the connection, and one that is not
// UTF-8, as JSON must be (400). On success release gives the body's bytes
// back to the budget, once the request is answered.
func (s *Server) receiveBody(w http.ResponseWriter, r *http.Request) (body []byte, release func(), err error) {
	return s.receiveBodyUpTo(w, r, s.opts.MaxBodyBytes)
}

// receiveBodyUpTo is receiveBody with a body of up to limit bytes.
func (s *Server) receiveBodyUpTo(w http.ResponseWriter, r *http.Request, limit int64) (body []byte, release func(), err error) {
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyReadTimeout))
	br := &budgetedReader{r: http.MaxBytesReader(w, r.Body, limit), budget: s.bodies}
	body, err = io.ReadAll(br)
	release = func() { s.bodies.give(br.held) }
	if err != nil {
		release()
		// The rest of the body is left unread: the connection cannot
		// carry another request.
		w.Header().Set("Connection", "close")
		return nil, nil, s.bodyError(err, limit)
	}
	// The body is whole: net/http has lifted the deadline for its read of
	// the next request (TestSearchOutlivesBodyDeadline).
	if err := checkUTF8(body); err != nil {
		release()
		return nil, nil, badRequest("%v", err)
	}
	return body, release, nil
}

// bodyError is the answer to a body of at most limit bytes that could not
// be received.
func (s *Server) bodyError(err error, limit int64) error {
	var tooLarge *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &tooLarge):
		return &httpError{code: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("request body over %d bytes", limit)}
	case errors.Is(err, errBodyBudget):
		return &overloadError{reason: rejectBodyBudget}
	case errors.As(err, &netErr) && netErr.Timeout():
		return &httpError{code: http.StatusRequestTimeout, msg: fmt.Sprintf("request body not received within %s: send the whole body at once", bodyReadTimeout)}
	}
	return badRequest("reading request body: %v", err)
}

// checkUTF8 refuses a body that is not UTF-8, naming the first bad byte
// and where it is: JSON text is UTF-8, and a decoder would otherwise
// replace the bytes silently and search for something else.
func checkUTF8(body []byte) error {
	if utf8.Valid(body) {
		return nil
	}
	at := 0
	for at < len(body) {
		r, size := utf8.DecodeRune(body[at:])
		if r == utf8.RuneError && size == 1 {
			break
		}
		at += size
	}
	return fmt.Errorf("request body is not valid UTF-8: byte 0x%02X at offset %d; send the query as UTF-8", body[at], at)
}
