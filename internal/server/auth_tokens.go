package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultTokenReload is how old the tokens read from a directory may grow
// before a request rereads it.
const DefaultTokenReload = 10 * time.Second

// maxTokenFileBytes bounds one token file: a token is a line, not a
// document.
const maxTokenFileBytes = 16 << 10

// TokenDir accepts the bearer tokens held in the files of a directory, one
// token a file (surrounding white space trimmed): a Secret mounted as a
// volume, one file per key. Files whose names start with "." (the
// kubelet's ..data links) and sub-directories are ignored. The directory
// is reread by the first request once the last read is older than the
// reload interval, so a rotated Secret is picked up without a restart;
// if a reread fails, the tokens read last stay in force and the failure
// is logged. Tokens are compared as SHA-256 digests in constant time and
// never logged.
type TokenDir struct {
	dir    string
	reload time.Duration
	log    *slog.Logger
	tokens atomic.Pointer[tokenSet]
	// reading is set while one request rereads the directory.
	reading atomic.Bool
	now     func() time.Time
}

// tokenSet is the digests of the tokens of one read of the directory.
type tokenSet struct {
	digests [][sha256.Size]byte
	readAt  time.Time
}

// NewTokenDir reads the tokens of dir, refusing a directory that cannot
// be read or holds none. reload is how old a read may grow (0 means
// DefaultTokenReload); log receives reread failures (nil: discarded).
func NewTokenDir(dir string, reload time.Duration, log *slog.Logger) (*TokenDir, error) {
	if reload <= 0 {
		reload = DefaultTokenReload
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := &TokenDir{dir: dir, reload: reload, log: log, now: time.Now}
	set, err := d.read()
	if err != nil {
		return nil, err
	}
	if len(set.digests) == 0 {
		return nil, fmt.Errorf("token directory %s holds no token: put one token in each file (a key of the Secret)", dir)
	}
	d.tokens.Store(set)
	return d, nil
}

// Mode is "bearer".
func (d *TokenDir) Mode() string { return "bearer" }

// Authorize accepts a token equal to one in the directory, for any
// access.
func (d *TokenDir) Authorize(_ context.Context, token string, _ Access) error {
	d.rereadIfStale()
	digest := sha256.Sum256([]byte(token))
	match := 0
	// Every digest is compared, so the time taken does not tell which
	// or how many tokens a guess came close to.
	for _, want := range d.tokens.Load().digests {
		match |= subtle.ConstantTimeCompare(digest[:], want[:])
	}
	if match == 0 {
		return unauthenticated("the bearer token is not accepted: it is none of the tokens in the Retriever's auth Secret")
	}
	return nil
}

// rereadIfStale rereads the directory when the last read is older than
// the reload interval. One request rereads; the others meanwhile use the
// tokens read last.
func (d *TokenDir) rereadIfStale() {
	if d.now().Sub(d.tokens.Load().readAt) < d.reload || !d.reading.CompareAndSwap(false, true) {
		return
	}
	defer d.reading.Store(false)
	set, err := d.read()
	if err != nil {
		d.log.Error("rereading the bearer tokens failed; the tokens read last stay in force", "dir", d.dir, "err", err)
		// Retry after another interval, not at once on every request.
		old := *d.tokens.Load()
		old.readAt = d.now()
		d.tokens.Store(&old)
		return
	}
	if len(set.digests) == 0 {
		d.log.Warn("the token directory holds no token: every guarded request is refused", "dir", d.dir)
	}
	d.tokens.Store(set)
}

// read returns the digests of the tokens of the directory's files.
func (d *TokenDir) read() (*tokenSet, error) {
	readAt := d.now()
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		return nil, fmt.Errorf("reading token directory: %w", err)
	}
	set := &tokenSet{readAt: readAt}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		token, err := readToken(filepath.Join(d.dir, e.Name()))
		if err != nil {
			return nil, err
		}
		if token != "" {
			set.digests = append(set.digests, sha256.Sum256([]byte(token)))
		}
	}
	return set, nil
}

// readToken returns the trimmed content of a token file, "" for a
// directory.
func readToken(path string) (string, error) {
	info, err := os.Stat(path) // follows the kubelet's links
	if err != nil {
		return "", fmt.Errorf("reading token file: %w", err)
	}
	if info.IsDir() {
		return "", nil
	}
	if info.Size() > maxTokenFileBytes {
		return "", fmt.Errorf("token file %s holds %d bytes, more than %d: one token a file", path, info.Size(), maxTokenFileBytes)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("reading token file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}
