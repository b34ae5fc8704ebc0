package remote

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// tarFile is an entry of a test archive: a regular file unless Type says
// otherwise.
type tarFile struct {
	Name, Body string
	Type       byte
	Link       string
}

// regular lists regular files of a test archive, in order.
func regular(nameBody ...string) []tarFile {
	var out []tarFile
	for i := 0; i+1 < len(nameBody); i += 2 {
		out = append(out, tarFile{Name: nameBody[i], Body: nameBody[i+1]})
	}
	return out
}

// tarOf builds an uncompressed tar archive.
func tarOf(t testing.TB, files []tarFile) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, f := range files {
		h := &tar.Header{Name: f.Name, Mode: 0o644, Typeflag: f.Type, Linkname: f.Link, ModTime: time.Unix(1700000000, 0)}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(f.Body))
		}
		if h.Typeflag == tar.TypeDir {
			h.Mode = 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f.Body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// gz compresses data as one gzip member.
func gz(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// tarGz builds a gzipped tar archive.
func tarGz(t testing.TB, files []tarFile) []byte {
	t.Helper()
	return gz(t, tarOf(t, files))
}

// zipFile is an entry of a test zip archive; Mode 0 is a regular file.
type zipFile struct {
	Name, Body string
	Mode       fs.FileMode // type bits, such as fs.ModeSymlink
}

// zipOf builds a zip archive.
func zipOf(t testing.TB, files []zipFile) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.Name, Method: zip.Deflate}
		h.SetMode(0o644 | f.Mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, f.Body); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// sha256Of is "sha256:<hex>" of data.
func sha256Of(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// served is what a test server answers with; the zero value of a field
// leaves its header out. It honours If-None-Match and If-Modified-Since
// and records the requests it got.
type served struct {
	mu           sync.Mutex
	body         []byte
	contentType  string
	etag         string
	lastModified string
	requests     []*http.Request
}

// set replaces the content.
func (s *served) set(body []byte, etag, lastModified string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.body, s.etag, s.lastModified = body, etag, lastModified
}

// hits returns how many requests arrived.
func (s *served) hits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// last returns the latest request.
func (s *served) last() *http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[len(s.requests)-1]
}

// ServeHTTP answers as a static file server would.
func (s *served) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r)
	body, etag, lm, ct := s.body, s.etag, s.lastModified, s.contentType
	s.mu.Unlock()
	if ct == "" {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	if etag != "" {
		w.Header().Set("ETag", etag)
	}
	if lm != "" {
		w.Header().Set("Last-Modified", lm)
	}
	if (etag != "" && r.Header.Get("If-None-Match") == etag) || (etag == "" && lm != "" && r.Header.Get("If-Modified-Since") == lm) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}

// serve starts a server for h, closed when the test ends.
func serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// serveBody serves body at any path with the given Content-Type.
func serveBody(t *testing.T, body []byte, contentType string) (*httptest.Server, *served) {
	t.Helper()
	s := &served{body: body, contentType: contentType}
	return serve(t, s), s
}

// fetchOK fetches and fails the test on a whole-source error.
func fetchOK(t *testing.T, name string, spec Spec) Result {
	t.Helper()
	res, err := Fetch(t.Context(), nil, name, spec)
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	return res
}

// ids lists document ids in order.
func ids(docs []hierarchy.Document) []string {
	out := []string{}
	for _, d := range docs {
		out = append(out, d.ID)
	}
	return out
}

// errorFor returns the refusal of a document, failing the test when there
// is none.
func errorFor(t *testing.T, res Result, doc string) DocumentError {
	t.Helper()
	for _, e := range res.Errors {
		if e.Document == doc {
			return e
		}
	}
	t.Fatalf("no error for %q; errors: %v", doc, res.Errors)
	return DocumentError{}
}

// wantContains fails unless s contains every part.
func wantContains(t *testing.T, s string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(s, p) {
			t.Errorf("%q does not contain %q", s, p)
		}
	}
}

// countingTransport counts the response body bytes the client consumed.
type countingTransport struct{ read atomic.Int64 }

// RoundTrip wraps the body of the default transport's response.
func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &c.read}
	}
	return resp, err
}

// countingBody adds what is read to n.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

// Read counts.
func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}
