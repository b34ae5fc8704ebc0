package remote

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
)

// readAhead is the buffer that lets the leading bytes be inspected before
// the stream is unpacked.
const readAhead = 32 << 10

// unpack reads a download as the kind it is (see resolveKind) into c,
// streaming tar and gzip and spooling zip. Only whole-source problems are
// returned.
func unpack(r io.Reader, contentType string, c *collector) error {
	br := bufio.NewReaderSize(r, readAhead)
	head, err := peek(br)
	if err != nil {
		return err
	}
	claimed := claimedKind(c.s.url.Path, contentType)
	k, err := resolveKind(magicKind(head), claimed, head)
	if err != nil {
		return err
	}
	switch k {
	case zipArchive:
		return unzip(br, c)
	case tarArchive:
		return untar(br, c) // unpacked bytes are downloaded bytes: the download budget bounds them
	case gzipData:
		return gunzip(br, claimed, c)
	}
	name := c.s.fileName()
	return c.single(name, contentType, br)
}

// peek returns up to headSize leading bytes; a shorter stream is not an
// error.
func peek(br *bufio.Reader) ([]byte, error) {
	head, err := br.Peek(headSize)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return head, nil
}

// gunzip unpacks a gzip stream within the unpacked-bytes budget: a tar
// inside (by its magic, or when the URL says .tar.gz/.tgz) is unpacked,
// anything else is the one compressed file, named after the URL without
// ".gz".
func gunzip(r io.Reader, claimed kind, c *collector) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("reading gzip data: %w", err)
	}
	defer zr.Close()
	br := bufio.NewReaderSize(c.extracted.wrap(zr), readAhead)
	head, err := peek(br)
	if err != nil {
		return fmt.Errorf("reading gzip data: %w", err)
	}
	if claimed == tarGzArchive || claimed == tarArchive || isTar(head) {
		return untar(br, c)
	}
	name := c.s.fileName()
	if lower := strings.ToLower(name); strings.HasSuffix(lower, ".gz") && len(name) > len(".gz") {
		name = name[:len(name)-len(".gz")]
	}
	return c.single(name, "", br)
}
