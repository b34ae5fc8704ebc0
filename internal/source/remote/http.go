package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// excerptBytes is how much of an error response body is read for its
// excerpt, and excerptRunes how much of it is kept.
const (
	excerptBytes = 512
	excerptRunes = 200
)

// Timeouts of the client used when the caller gives none. A download as a
// whole is bounded by Spec.Timeout.
const (
	dialTimeout           = 30 * time.Second
	tlsHandshakeTimeout   = 15 * time.Second
	responseHeaderTimeout = 60 * time.Second
	maxRedirects          = 10
)

// defaultClient is the client of a nil *http.Client: unlike
// http.DefaultClient, its connection, TLS handshake and wait for response
// headers are bounded, so a server that never answers cannot hold a fetch
// (and the per-URL lock of a Fetcher) beyond them.
var defaultClient = &http.Client{Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	DialContext:           (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext,
	TLSHandshakeTimeout:   tlsHandshakeTimeout,
	ResponseHeaderTimeout: responseHeaderTimeout,
	IdleConnTimeout:       90 * time.Second,
	MaxIdleConns:          100,
	ForceAttemptHTTP2:     true,
}}

// client returns a copy of c (defaultClient when nil) whose redirects keep
// the source's credentials to its own origin (see redirectPolicy).
func client(c *http.Client, s settings) *http.Client {
	if c == nil {
		c = defaultClient
	}
	cc := *c
	cc.CheckRedirect = redirectPolicy(c.CheckRedirect, s)
	return &cc
}

// origin is a URL's scheme, host and port (the scheme's default port when
// it names none), the only place a source's credentials are sent.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// ErrInsecureRedirect is returned for a redirect from https to http of a
// source that sends credentials.
var ErrInsecureRedirect = errors.New("redirect from https to http refused: the source sends credentials, which would travel in clear text")

// redirectPolicy wraps the client's CheckRedirect (nil: at most 10
// redirects, as Go's default). Go's client keeps Authorization on a
// redirect to the same host name whatever its port or scheme; here, once a
// redirect leaves the source's origin (scheme, host and port), every
// header the spec set (Header, where credentials go) is dropped from it
// and from the hops after it. A redirect from https to http of a source
// with credentials (Header or a password in the URL) is refused with
// ErrInsecureRedirect rather than followed without them: content asked
// for with credentials is not to be taken from a clear-text, forgeable
// answer.
func redirectPolicy(next func(*http.Request, []*http.Request) error, s settings) func(*http.Request, []*http.Request) error {
	home := origin(s.url)
	credentials := len(s.Header) > 0 || s.url.User != nil
	return func(req *http.Request, via []*http.Request) error {
		if credentials && strings.EqualFold(via[0].URL.Scheme, "https") && strings.EqualFold(req.URL.Scheme, "http") {
			return ErrInsecureRedirect
		}
		away := origin(req.URL) != home
		for _, r := range via[1:] {
			away = away || origin(r.URL) != home
		}
		if away {
			for k := range s.Header {
				req.Header.Del(k)
			}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		return nil
	}
}

// send makes one request for the spec's URL with the caller's headers and,
// when since has validators, the conditional headers that let the server
// answer 304. It asks for the bytes as stored (no transfer compression) so
// that the checksum is the one of the file, unless the caller set
// Accept-Encoding. Transport errors come back without the URL, which may
// hold credentials: callers name it redacted.
func send(ctx context.Context, c *http.Client, method string, s settings, since Version) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, s.url.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header = s.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if req.Header.Get("Accept-Encoding") == "" {
		req.Header.Set("Accept-Encoding", "identity")
	}
	if since.ETag != "" {
		req.Header.Set("If-None-Match", since.ETag)
	}
	if since.LastModified != "" {
		req.Header.Set("If-Modified-Since", since.LastModified)
	}
	resp, err := client(c, s).Do(req)
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		return nil, ue.Err
	}
	return resp, err
}

// checkStatus returns a *StatusError for a response that is not 2xx,
// with the start of its body on one line.
func checkStatus(resp *http.Response) error {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	head, _ := io.ReadAll(io.LimitReader(resp.Body, excerptBytes))
	return &StatusError{StatusCode: resp.StatusCode, Status: statusLine(resp), Excerpt: excerpt(head)}
}

// statusLine is "404 Not Found", also for a server that sent no reason.
func statusLine(resp *http.Response) string {
	if resp.Status != "" {
		return resp.Status
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
}

// excerpt makes the start of a body fit on one line of a status message:
// white space collapsed, at most excerptRunes runes, and binary data
// described rather than shown.
func excerpt(head []byte) string {
	text, ok := textExcerpt(head)
	if !ok {
		return fmt.Sprintf("(%d bytes of binary data)", len(head))
	}
	return text
}

// textExcerpt is head on one line (white space collapsed, at most
// excerptRunes runes), or false when head is not UTF-8 text.
func textExcerpt(head []byte) (string, bool) {
	head = trimPartialRune(head)
	if !utf8.Valid(head) || bytes.IndexByte(head, 0) >= 0 {
		return "", false
	}
	text := strings.Join(strings.Fields(string(head)), " ")
	if utf8.RuneCountInString(text) > excerptRunes {
		text = string([]rune(text)[:excerptRunes]) + "…"
	}
	return text, true
}

// trimPartialRune drops an incomplete UTF-8 sequence that a byte limit cut
// off at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// fail names the source (redacted) in a whole-source error and, when the
// context ended, makes the error match the context's error as well, since
// a cancelled read may surface as a plain I/O error.
func (s settings) fail(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		err = fmt.Errorf("%w (%w)", ctxErr, err)
	}
	if cause := context.Cause(ctx); cause != nil && !errors.Is(err, cause) {
		err = fmt.Errorf("%w: %w", cause, err)
	}
	return fmt.Errorf("remote source %s: %w", redact(s.url), err)
}

// errTimeout is the cause of a fetch's context when Spec.Timeout passed.
type errTimeout time.Duration

func (e errTimeout) Error() string {
	return fmt.Sprintf("download not finished within %s (timeout)", time.Duration(e))
}

// Is makes an errTimeout match context.DeadlineExceeded.
func (e errTimeout) Is(target error) bool { return target == context.DeadlineExceeded }

// deadline bounds ctx by the spec's Timeout.
func (s settings) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, s.Timeout, errTimeout(s.Timeout))
}
