package remote

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/parentrag/parentrag/internal/document"
)

// Defaults for the zero values of Spec.
const (
	defaultMaxFileBytes  int64 = 10 << 20
	defaultMaxTotalBytes int64 = 1 << 30
	defaultMaxFiles            = 100000
	// DefaultTimeout bounds one fetch (request, download and unpacking)
	// when Spec.Timeout is zero.
	DefaultTimeout = 10 * time.Minute
)

// defaultInclude is what Spec.Include is when empty: every file type
// package document reads.
var defaultInclude = func() []string {
	var globs []string
	for _, ext := range document.Extensions() {
		globs = append(globs, "**/*"+ext)
	}
	return globs
}()

// DefaultInclude is what Spec.Include means when empty.
func DefaultInclude() []string { return slices.Clone(defaultInclude) }

// Spec says where a remote source is and how much of it to accept.
type Spec struct {
	// URL is the http or https address of a file or an archive.
	URL string
	// Include holds globs on slash-separated archive paths; a file is read
	// when one matches. "*" matches within a path segment and "**" any
	// number of segments; neither matches a segment that starts with a dot
	// (such as .github) unless the pattern segment does too. Default:
	// every extension package document reads (**/*.md, **/*.html,
	// **/*.pdf...). Not applied to a single file.
	Include []string
	// Exclude holds globs, as Include, for files not to read.
	Exclude []string
	// MaxFileBytes bounds one file; a larger one is refused as a
	// DocumentError. Default 10 MiB.
	MaxFileBytes int64
	// MaxTotalBytes bounds both the download and the unpacked archive
	// stream; exceeding either fails the whole source. Default 1 GiB.
	MaxTotalBytes int64
	// MaxFiles bounds the archive entries that match Include and not
	// Exclude; more fail the whole source. Default 100000.
	MaxFiles int
	// Checksum, when set, is the sha256 the download must have: as
	// "sha256:<hex>" (a Flux artifact digest) or bare hex.
	Checksum string
	// Header is sent with every request (for example Authorization).
	Header http.Header
	// Timeout bounds one fetch or probe as a whole: connecting, waiting for
	// the response and reading the whole body; past it the fetch fails and
	// a Fetcher's per-URL lock is released. Default DefaultTimeout. The
	// client used when none is given also bounds connecting (30s), the TLS
	// handshake (15s) and the wait for response headers (60s).
	Timeout time.Duration
	// TempDir is where a zip archive is spooled for random access.
	// Default os.TempDir().
	TempDir string
	// Memory, when set, counts the text of the documents read (see
	// Memory); the result holds it until released (Result.Release).
	// Not part of what the source is.
	Memory *Memory `json:"-"`
}

// settings is a Spec that passed validation, with its defaults applied.
type settings struct {
	Spec
	url      *url.URL
	checksum string // "sha256:<lower hex>", or "" when none is asked for
	// lean reads keep no documents (see Fetcher.Lean).
	lean bool
}

// settle validates spec and applies its defaults. It guarantees an http(s)
// URL with a host, well-formed globs, positive limits and a normalized
// checksum; the error says which field is wrong.
func (spec Spec) settle() (settings, error) {
	s := settings{Spec: spec}
	var err error
	if s.url, err = parseURL(spec.URL); err != nil {
		return settings{}, err
	}
	if s.checksum, err = parseChecksum(spec.Checksum); err != nil {
		return settings{}, err
	}
	if len(s.Include) == 0 {
		s.Include = defaultInclude
	}
	if s.Include, err = cleanPatterns("include", s.Include); err != nil {
		return settings{}, err
	}
	if s.Exclude, err = cleanPatterns("exclude", s.Exclude); err != nil {
		return settings{}, err
	}
	return s, s.applyLimits()
}

// applyLimits replaces zero limits by their defaults and refuses negative
// ones.
func (s *settings) applyLimits() error {
	if s.MaxFileBytes < 0 || s.MaxTotalBytes < 0 || s.MaxFiles < 0 || s.Timeout < 0 {
		return errors.New("maxFileBytes, maxTotalBytes, maxFiles and timeout must not be negative")
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.MaxFileBytes == 0 {
		s.MaxFileBytes = defaultMaxFileBytes
	}
	if s.MaxTotalBytes == 0 {
		s.MaxTotalBytes = defaultMaxTotalBytes
	}
	if s.MaxFiles == 0 {
		s.MaxFiles = defaultMaxFiles
	}
	return nil
}

// parseURL accepts an absolute http or https URL with a host.
func parseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("url %q: want an http or https URL with a host", redact(u))
	}
	return u, nil
}

// redact gives u without its password, query and fragment, which may hold
// credentials (signed URLs), for use in messages.
func redact(u *url.URL) string {
	c := *u
	c.RawQuery, c.ForceQuery, c.Fragment, c.RawFragment = "", false, "", ""
	return c.Redacted()
}

// parseChecksum normalizes "sha256:<hex>" or bare hex to
// "sha256:<lower hex>"; "" stays "".
func parseChecksum(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	algo, sum, found := strings.Cut(raw, ":")
	if !found {
		algo, sum = "sha256", raw
	}
	if !strings.EqualFold(algo, "sha256") {
		return "", fmt.Errorf("checksum %q: unsupported algorithm %q (only sha256)", raw, algo)
	}
	if b, err := hex.DecodeString(sum); err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("checksum %q: want sha256:<64 hex digits>", raw)
	}
	return "sha256:" + strings.ToLower(sum), nil
}

// cleanPatterns drops a leading "./" or "/" from each glob (paths in an
// archive are relative) and refuses malformed ones, naming the field.
func cleanPatterns(field string, patterns []string) ([]string, error) {
	out := make([]string, len(patterns))
	for i, p := range patterns {
		p = strings.TrimPrefix(strings.TrimPrefix(p, "./"), "/")
		if err := checkPattern(p); err != nil {
			return nil, fmt.Errorf("%s pattern %q: %w", field, patterns[i], err)
		}
		out[i] = p
	}
	return out, nil
}

// selects reports whether an archive path matches Include and no Exclude.
func (s settings) selects(p string) bool {
	return matchAny(s.Include, p) && !matchAny(s.Exclude, p)
}

// fileName is the name a single file gets in its document id: the last
// segment of the URL path, or "index" when the path names a folder.
func (s settings) fileName() string {
	name := path.Base(s.url.Path)
	if name == "." || name == "/" {
		return "index"
	}
	return name
}
