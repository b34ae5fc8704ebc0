package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/parentrag/parentrag/internal/inspector"
)

// Defaults of InspectorOptions.
const (
	DefaultPreviewBodyBytes     = 1 << 20
	DefaultPreviewDocumentBytes = 64 << 10
	DefaultPreviewUnits         = 20_000
	// maxPolicyBytes bounds each policy of a preview: a ChunkingPolicy is
	// a few hundred bytes.
	maxPolicyBytes = 64 << 10
)

// InspectorOptions turn on the inspector (package inspector) and bound its
// policy preview. Zero limits take their defaults.
type InspectorOptions struct {
	// Enabled serves the page under /inspector/ and its preview at POST
	// /inspector/preview. The page's own files answer without a token:
	// they hold no data, and a browser cannot send one when it opens a
	// page. The preview, like /v1/retrieve that the page queries, is
	// guarded by Options.Auth.
	Enabled bool
	// MaxBodyBytes caps a preview's request body (default 1 MiB); larger
	// is 413. Preview bodies count in Options.BodyBudget too.
	MaxBodyBytes int64
	// MaxDocumentBytes caps the document of a preview (default 64 KiB);
	// larger is 413.
	MaxDocumentBytes int
	// MaxUnits caps the parents and children one policy may cut the
	// document into (default 20,000); more is 400.
	MaxUnits int
}

// withDefaults returns o with zero limits set to their defaults.
func (o InspectorOptions) withDefaults() InspectorOptions {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultPreviewBodyBytes
	}
	if o.MaxDocumentBytes <= 0 {
		o.MaxDocumentBytes = DefaultPreviewDocumentBytes
	}
	if o.MaxUnits <= 0 {
		o.MaxUnits = DefaultPreviewUnits
	}
	return o
}

// previewShape is a preview request's body.
var previewShape = &shape{
	want:   "a JSON object with a document and policies",
	names:  []string{"name", "document", "policies"},
	fields: map[string]*shape{"name": nil, "document": nil, "policies": nil},
}

// newPreviewLane is where previews run: one at a time, one more waiting
// until its request times out, any other refused at once. A preview
// splits a whole document, tens of megabytes of heap for the finest
// policy of the largest document, so previews never run side by side,
// and never in a query slot.
func newPreviewLane(o Options) *lane { return newLane(1, 1, o.RequestTimeout) }

// inspectorRoutes adds the page and its preview to mux when the inspector
// is enabled.
func (s *Server) inspectorRoutes(mux *http.ServeMux) {
	if !s.opts.Inspector.Enabled {
		return
	}
	mux.Handle(inspector.Prefix, s.instrument(inspector.Prefix, inspector.Page()))
	mux.Handle(inspector.PreviewPath, s.instrument(inspector.PreviewPath, http.HandlerFunc(s.preview)))
}

// inspectorPagePaths are the paths of the page's files, open to requests
// without a token: the page, its folder without the slash (which redirects
// to it), and its scripts and styles. None when the inspector is off.
func (o Options) inspectorPagePaths() []string {
	if !o.Inspector.Enabled {
		return nil
	}
	return append(inspector.PagePaths(), strings.TrimSuffix(inspector.Prefix, "/"))
}

// preview answers POST /inspector/preview: the document and policies of
// an inspector.PreviewRequest in, an inspector.Preview out. A body over
// InspectorOptions.MaxBodyBytes, a document over MaxDocumentBytes or a
// policy over 64 KiB is 413, a bad document or policy 400, a preview
// refused while another runs (or for the body budget) 503 with
// Retry-After, one that runs past the request timeout 504.
func (s *Server) preview(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed: use POST", r.Method))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
	defer cancel()
	resp, err := s.runPreview(ctx, w, r)
	var over *overloadError
	switch {
	case errors.As(err, &over): // the body budget is spent
		s.overloaded(w, over, writeError)
	case err != nil:
		if statusOf(err) == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter/time.Second)))
		}
		writeError(w, statusOf(err), err.Error())
	default:
		writeJSON(w, http.StatusOK, resp)
	}
}

// errPreviewBusy refuses a preview while another runs and one waits. It
// is not counted in parentrag_requests_rejected_total, which tells of
// queries shed: the inspector is a person's tool beside them.
var errPreviewBusy = &httpError{code: http.StatusServiceUnavailable,
	msg: "a policy preview is already running and another is waiting: previews run one at a time; retry later"}

// runPreview refuses a preview at once while another runs and one waits,
// before its body is read; else it receives and checks the body, waits
// for the preview slot and cuts the document in it.
func (s *Server) runPreview(ctx context.Context, w http.ResponseWriter, r *http.Request) (*inspector.Preview, error) {
	if s.previews.full() {
		w.Header().Set("Connection", "close")
		return nil, errPreviewBusy
	}
	body, release, err := s.receiveBodyUpTo(w, r, s.opts.Inspector.MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	defer release()
	req, err := s.decodePreview(body)
	if err != nil {
		return nil, err
	}
	done, _ := s.previews.acquire(ctx)
	if done == nil {
		return nil, errPreviewBusy
	}
	return s.cutWithin(ctx, req, done)
}

// decodePreview decodes a preview request and refuses one too large to
// cut: a document over MaxDocumentBytes or a policy over maxPolicyBytes
// (413), or one with no document (400).
func (s *Server) decodePreview(body []byte) (inspector.PreviewRequest, error) {
	var req inspector.PreviewRequest
	if err := decodeStrictJSON(body, "", previewShape, &req); err != nil {
		return req, err
	}
	limit := s.opts.Inspector.MaxDocumentBytes
	switch {
	case req.Document == "":
		return req, badRequest("document is required: the text to cut")
	case len(req.Document) > limit:
		return req, &httpError{code: http.StatusRequestEntityTooLarge,
			msg: fmt.Sprintf("document of %d bytes is over the preview's limit of %d bytes: preview a part of it", len(req.Document), limit)}
	}
	for i, p := range req.Policies {
		if len(p) > maxPolicyBytes {
			return req, &httpError{code: http.StatusRequestEntityTooLarge,
				msg: fmt.Sprintf("policy %c of %d bytes is over the limit of %d bytes", 'A'+i, len(p), maxPolicyBytes)}
		}
	}
	return req, nil
}

// previewResult is what a preview's cut returns.
type previewResult struct {
	preview *inspector.Preview
	err     error
}

// cutWithin cuts the document in a goroutine that holds the preview slot
// (release gives it back) until the cut is done, and waits for it until
// ctx's deadline: past it the request is answered 504 while the cut,
// which cannot be stopped halfway, ends in the background still holding
// the slot, so that no more than one preview ever runs.
func (s *Server) cutWithin(ctx context.Context, req inspector.PreviewRequest, release func()) (*inspector.Preview, error) {
	done := make(chan previewResult, 1)
	go func() {
		defer release()
		p, err := inspector.Run(req, s.opts.Inspector.MaxUnits)
		done <- previewResult{p, err}
	}()
	select {
	case res := <-done:
		if res.err != nil {
			return nil, badRequest("%v", res.err)
		}
		return res.preview, nil
	case <-ctx.Done():
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, &httpError{code: http.StatusServiceUnavailable, msg: "request cancelled"}
		}
		return nil, &httpError{code: http.StatusGatewayTimeout,
			msg: fmt.Sprintf("the preview took longer than %s: preview a shorter document or larger chunks", s.opts.RequestTimeout)}
	}
}
