package remote

import (
	"context"
	"fmt"
	"net/http"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// Result is what one download of a source gave.
type Result struct {
	// Documents are sorted by ID.
	Documents []hierarchy.Document
	// Errors are the entries refused one by one, sorted by Document.
	Errors []DocumentError
	// Version holds the response's ETag and Last-Modified and the sha256
	// of the downloaded bytes.
	Version Version
	// Bytes is how many bytes were downloaded.
	Bytes int64
	// Cached is true when a Fetcher returned its stored result (the
	// server answered 304, or MinInterval had not passed) without a new
	// download.
	Cached bool
	// Count is how many documents were read: len(Documents), also when a
	// lean Fetcher did not keep them.
	Count int
	// hold is what Documents take of Spec.Memory, until Release.
	hold *Hold
}

// Release gives back what the result's documents take of the Memory of
// their Spec, once its holder no longer uses them (a Fetcher's cache may
// keep them on, then to be dropped when room is needed). Call it once per
// result, and not at all for a result without a Memory.
func (r Result) Release() { r.hold.Release() }

// Fetch downloads the source and reads its documents: a tar, gzipped tar
// or zip archive (told by magic bytes, URL extension and Content-Type)
// has every entry Include selects read; anything else is a single file,
// read as one document (several for JSON Lines) whatever Include says.
// Document ids are "<name>/<path in the archive>", or "<name>/<file name>"
// for a single file. The download is streamed and hashed once; zip
// archives are spooled to a temporary file.
//
// Per-document problems go to Result.Errors and never fail the source.
// The whole source fails, with an error that names the URL (without query
// or password) and the problem, on a bad spec, a transport error or
// cancelled context, a non-2xx status (a *StatusError with the start of
// the body), a broken archive, a checksum mismatch (ErrChecksum) and a
// size or file-count limit (ErrLimit).
func Fetch(ctx context.Context, c *http.Client, name string, spec Spec) (Result, error) {
	res, _, err := fetch(ctx, c, name, spec, Version{}, false)
	return res, err
}

// fetch is Fetch with the validators of a stored result: when the server
// answers 304 Not Modified to them, it reports so with an empty Result.
// A lean fetch keeps no document (see Fetcher.Lean).
func fetch(ctx context.Context, c *http.Client, name string, spec Spec, since Version, lean bool) (Result, bool, error) {
	s, err := spec.settle()
	if err != nil {
		return Result{}, false, fmt.Errorf("remote source spec: %w", err)
	}
	s.lean = lean
	ctx, cancel := s.deadline(ctx)
	defer cancel()
	res, notModified, err := get(ctx, c, name, s, since)
	if err != nil {
		return Result{}, false, s.fail(ctx, err)
	}
	if res.Count == 0 {
		res.Count = len(res.Documents)
	}
	return res, notModified, nil
}

// get makes the request and reads the response.
func get(ctx context.Context, c *http.Client, name string, s settings, since Version) (Result, bool, error) {
	resp, err := send(ctx, c, http.MethodGet, s, since)
	if err != nil {
		return Result{}, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified && (since.ETag != "" || since.LastModified != "") {
		return Result{}, true, nil
	}
	if err := checkStatus(resp); err != nil {
		return Result{}, false, err
	}
	res, err := readResponse(resp, name, s)
	return res, false, err
}

// readResponse unpacks a 2xx response within the limits, then checks the checksum
// of everything downloaded. A declared Content-Length over MaxTotalBytes
// fails before any byte is read.
func readResponse(resp *http.Response, name string, s settings) (Result, error) {
	if resp.ContentLength > s.MaxTotalBytes {
		return Result{}, fmt.Errorf("%w: download is %d bytes, over %d bytes (MaxTotalBytes)", ErrLimit, resp.ContentLength, s.MaxTotalBytes)
	}
	dl := newDownload(resp.Body, s.MaxTotalBytes)
	c := newCollector(name, s)
	err := unpack(dl, resp.Header.Get("Content-Type"), c)
	var n int64
	var sum string
	if err == nil {
		n, sum, err = dl.finish()
	}
	if err == nil && s.checksum != "" && sum != s.checksum {
		err = fmt.Errorf("%w: expected %s, downloaded %s", ErrChecksum, s.checksum, sum)
	}
	if err != nil {
		c.hold.Release()
		return Result{}, err
	}
	res := c.result()
	res.Version, res.Bytes = versionOf(resp.Header, sum), n
	return res, nil
}
