package remote

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"

	"github.com/parentrag/parentrag/internal/document"
)

// unzip spools a zip archive to a temporary file (zip needs random access;
// the download budget bounds the file) and reads its entries into c. The
// temporary file is removed before it returns.
func unzip(r io.Reader, c *collector) error {
	f, err := os.CreateTemp(c.s.TempDir, "parentrag-remote-*.zip")
	if err != nil {
		return fmt.Errorf("spooling zip archive: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	n, err := io.Copy(f, r)
	if err != nil {
		return fmt.Errorf("spooling zip archive: %w", err)
	}
	zr, err := zip.NewReader(f, n)
	// An insecure name comes with a usable reader; admit refuses it.
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return fmt.Errorf("reading zip archive: %w", err)
	}
	if document.IsWordZip(zr) {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("spooling zip archive: %w", err)
		}
		return c.single(c.s.fileName(), "", f) // a Word document is one file, not an archive
	}
	for _, zf := range zr.File {
		if err := c.readZipFile(zf); err != nil {
			return err
		}
	}
	return nil
}

// readZipFile reads one zip entry within the unpacked-bytes budget.
// Entries are independent, so a corrupt one is refused alone; only an
// exhausted budget or MaxFiles fails the source.
func (c *collector) readZipFile(zf *zip.File) error {
	f, ok, err := c.admit(zipEntry(zf))
	if err != nil || !ok {
		return err
	}
	rc, err := zf.Open()
	if err != nil {
		c.reject(f.path, "unreadable zip entry: "+err.Error())
		return nil
	}
	defer rc.Close()
	err = c.read(f, c.extracted.wrap(rc))
	if errors.Is(err, ErrLimit) || errors.Is(err, ErrMemoryBusy) {
		return err
	}
	if err != nil {
		c.reject(f.path, "unreadable zip entry: "+err.Error())
	}
	return nil
}

// zipEntry describes a zip entry by its mode bits.
func zipEntry(zf *zip.File) entry {
	e := entry{name: zf.Name, size: int64(min(zf.UncompressedSize64, math.MaxInt64))}
	mode := zf.Mode()
	switch {
	case mode.IsDir():
		e.kind = dirEntry
	case mode&fs.ModeSymlink != 0:
		e.kind = symlinkEntry
	case !mode.IsRegular():
		e.kind, e.special = specialEntry, zipSpecial(mode)
	}
	return e
}

// zipSpecial names the kind of an irregular, non-link zip entry.
func zipSpecial(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeCharDevice != 0:
		return "character device"
	case mode&fs.ModeDevice != 0:
		return "block device"
	case mode&fs.ModeNamedPipe != 0:
		return "named pipe"
	case mode&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}
