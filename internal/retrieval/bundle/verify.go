package bundle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/parentrag/parentrag/internal/filesum"
)

// ErrCorrupt marks a bundle file that is missing or differs from what the
// manifest records.
var ErrCorrupt = errors.New("bundle file does not match the manifest")

// sumFiles returns the size and sha256 of every regular file under dir but
// the manifest, sorted by path. A file in written, by its path in dir,
// whose size is the one written there is not read again: its writer
// hashed it as it wrote it.
func sumFiles(dir string, written map[string]filesum.Sum) ([]FileSum, error) {
	var sums []FileSum
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == ManifestFile || rel == ManifestFile+".tmp" {
			return nil
		}
		if sum, ok := written[rel]; ok {
			if info, err := d.Info(); err == nil && info.Size() == sum.Size {
				sums = append(sums, FileSum{Path: rel, Size: sum.Size, SHA256: sum.SHA256})
				return nil
			}
		}
		size, sum, err := sumFile(context.Background(), p)
		if err != nil {
			return err
		}
		sums = append(sums, FileSum{Path: rel, Size: size, SHA256: sum})
		return nil
	})
	slices.SortFunc(sums, func(a, b FileSum) int {
		switch {
		case a.Path < b.Path:
			return -1
		case a.Path > b.Path:
			return 1
		}
		return 0
	})
	return sums, err
}

// sumFile streams the file at p through sha256, stopping when ctx is done.
func sumFile(ctx context.Context, p string) (int64, string, error) {
	f, err := os.Open(p)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	h := sha256.New()
	buf := make([]byte, 1<<20)
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return n, "", err
		}
		k, err := f.Read(buf)
		h.Write(buf[:k])
		n += int64(k)
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, "", err
		}
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

// VerifyFiles checks that every file m lists is in dir with its recorded
// size and sha256, reading each once. An error wraps ErrCorrupt and names
// the file. A manifest that lists no files (a bundle written before they
// were recorded) is not verified.
func VerifyFiles(ctx context.Context, dir string, m Manifest) error {
	for _, f := range m.Files {
		clean := path.Clean(f.Path)
		if clean != f.Path || path.IsAbs(clean) || clean == ".." || len(clean) > 2 && clean[:3] == "../" {
			return fmt.Errorf("%w: the manifest lists %q, which is not a path inside the bundle", ErrCorrupt, f.Path)
		}
		p := filepath.Join(dir, filepath.FromSlash(clean))
		info, err := os.Stat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("%w: %s is missing", ErrCorrupt, f.Path)
		case err != nil:
			return fmt.Errorf("verifying %s: %w", f.Path, err)
		case info.Size() != f.Size:
			return fmt.Errorf("%w: %s holds %d bytes, the manifest says %d (truncated or replaced?)", ErrCorrupt, f.Path, info.Size(), f.Size)
		}
		_, sum, err := sumFile(ctx, p)
		if err != nil {
			return fmt.Errorf("verifying %s: %w", f.Path, err)
		}
		if sum != f.SHA256 {
			return fmt.Errorf("%w: %s has sha256 %s, the manifest says %s (changed since it was written)", ErrCorrupt, f.Path, sum, f.SHA256)
		}
	}
	return nil
}
