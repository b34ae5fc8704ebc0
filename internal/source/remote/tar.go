package remote

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
)

// untar reads every entry of a tar stream into c. The stream must already
// count against a budget (the unpacked bytes of a gzipped tar, the
// download of a plain one): skipping an entry reads it too, so a bomb is
// stopped by the budget even when every entry is refused. A broken stream
// fails the whole source.
func untar(r io.Reader, c *collector) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		// An insecure name comes with a usable header; admit refuses it.
		if err != nil && !errors.Is(err, tar.ErrInsecurePath) {
			return fmt.Errorf("reading tar archive: %w", err)
		}
		f, ok, err := c.admit(tarEntry(h))
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := c.read(f, tr); err != nil {
			return fmt.Errorf("reading tar archive: %w", err)
		}
	}
}

// tarSpecial names the tar entry types that are neither files, folders
// nor links.
var tarSpecial = map[byte]string{
	tar.TypeChar:  "character device",
	tar.TypeBlock: "block device",
	tar.TypeFifo:  "named pipe",
	tar.TypeCont:  "contiguous file",
}

// tarEntry describes a tar header.
func tarEntry(h *tar.Header) entry {
	e := entry{name: h.Name, size: h.Size, link: h.Linkname}
	switch h.Typeflag {
	case tar.TypeReg, tar.TypeGNUSparse:
		e.kind = regularEntry
	case tar.TypeDir:
		e.kind = dirEntry
	case tar.TypeSymlink:
		e.kind = symlinkEntry
	case tar.TypeLink:
		e.kind = hardlinkEntry
	case tar.TypeXGlobalHeader, tar.TypeXHeader, tar.TypeGNULongName, tar.TypeGNULongLink:
		e.kind = metaEntry
	default:
		e.kind, e.special = specialEntry, tarSpecial[h.Typeflag]
		if e.special == "" {
			e.special = fmt.Sprintf("entry of tar type %q", h.Typeflag)
		}
	}
	return e
}
