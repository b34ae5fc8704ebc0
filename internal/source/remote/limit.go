package remote

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
)

// budget is a byte allowance shared by every reader it wraps.
type budget struct {
	limit int64
	used  int64
	what  string // what is counted, for the error: "download"
}

// newBudget allows limit bytes of what.
func newBudget(limit int64, what string) *budget {
	return &budget{limit: limit, what: what}
}

// wrap returns a reader that counts what it reads from r against the
// budget and fails with an ErrLimit error as soon as one byte more than the
// limit is available, so a reader never consumes much beyond it.
func (b *budget) wrap(r io.Reader) io.Reader {
	return &budgetReader{r: r, b: b}
}

// err is the error of an exhausted budget.
func (b *budget) err() error {
	return fmt.Errorf("%w: %s is over %d bytes (MaxTotalBytes)", ErrLimit, b.what, b.limit)
}

// budgetReader reads through a budget.
type budgetReader struct {
	r io.Reader
	b *budget
}

// Read reads at most what is left of the budget; once nothing is left it
// reads one byte to tell the end of r (its error) from more data (ErrLimit).
func (r *budgetReader) Read(p []byte) (int, error) {
	left := r.b.limit - r.b.used
	if left <= 0 {
		var one [1]byte
		if n, err := r.r.Read(one[:]); n == 0 {
			return 0, err
		}
		return 0, r.b.err()
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := r.r.Read(p)
	r.b.used += int64(n)
	return n, err
}

// download is a response body read within MaxTotalBytes while its sha256
// is computed, so the archive is hashed as it streams.
type download struct {
	r      io.Reader
	hash   hash.Hash
	budget *budget
}

// newDownload reads body within limit bytes, hashing what it reads.
func newDownload(body io.Reader, limit int64) *download {
	b := newBudget(limit, "download")
	h := sha256.New()
	return &download{r: io.TeeReader(b.wrap(body), h), hash: h, budget: b}
}

// Read reads the body.
func (d *download) Read(p []byte) (int, error) {
	return d.r.Read(p)
}

// finish reads what the unpacking left of the body (an archive may end
// before the last bytes) so that the size and checksum cover all of it, and
// returns them ("sha256:<hex>").
func (d *download) finish() (int64, string, error) {
	if _, err := io.Copy(io.Discard, d.r); err != nil {
		return 0, "", err
	}
	return d.budget.used, "sha256:" + hex.EncodeToString(d.hash.Sum(nil)), nil
}
