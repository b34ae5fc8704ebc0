package remote

import (
	"bytes"
	"fmt"
	"mime"
	"strings"
)

// kind is the container a download is: a plain file or an archive.
type kind int

const (
	plainFile kind = iota
	tarArchive
	tarGzArchive // claimed by a name or media type; the bytes show gzip
	gzipData     // a gzip stream: a tar inside, or one compressed file
	zipArchive
)

// String names the kind for messages.
func (k kind) String() string {
	return [...]string{"plain file", "tar archive", "gzipped tar archive", "gzip file", "zip archive"}[k]
}

// headSize is how many leading bytes the magic numbers are looked for in:
// a tar header block.
const headSize = 512

// magicKind tells the kind from the leading bytes: gzip (1f 8b), zip
// ("PK\x03\x04", or "PK\x05\x06" for an empty one), tar ("ustar" at
// offset 257); anything else is a plain file.
func magicKind(head []byte) kind {
	switch {
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return gzipData
	case bytes.HasPrefix(head, []byte("PK\x03\x04")), bytes.HasPrefix(head, []byte("PK\x05\x06")):
		return zipArchive
	case isTar(head):
		return tarArchive
	}
	return plainFile
}

// isTar reports whether a header block has the ustar magic (POSIX and GNU
// tar, and Go's archive/tar, write it).
func isTar(head []byte) bool {
	return len(head) >= 262 && string(head[257:262]) == "ustar"
}

// claimedKind is the kind the URL path's extension, else the response's
// Content-Type, says the download is.
func claimedKind(urlPath, contentType string) kind {
	lower := strings.ToLower(urlPath)
	for _, c := range []struct {
		suffix string
		kind   kind
	}{{".tar.gz", tarGzArchive}, {".tgz", tarGzArchive}, {".tar", tarArchive}, {".zip", zipArchive}, {".gz", gzipData}} {
		if strings.HasSuffix(lower, c.suffix) {
			return c.kind
		}
	}
	media, _, _ := mime.ParseMediaType(contentType)
	switch media {
	case "application/zip", "application/x-zip-compressed":
		return zipArchive
	case "application/x-tar":
		return tarArchive
	case "application/x-compressed-tar", "application/x-gtar":
		return tarGzArchive
	case "application/gzip", "application/x-gzip":
		return gzipData
	}
	return plainFile
}

// resolveKind settles what to unpack: the magic bytes win; without any, a
// claimed tar is trusted (old tar formats have no magic), and any other
// claimed archive is an error that shows how the content starts (often an
// HTML page served in its place).
func resolveKind(magic, claimed kind, head []byte) (kind, error) {
	if magic != plainFile || claimed == plainFile {
		return magic, nil
	}
	if claimed == tarArchive {
		return tarArchive, nil
	}
	if text, ok := textExcerpt(head[:min(len(head), 64)]); ok {
		return 0, fmt.Errorf("expected a %s, but the content is not one (it starts with %q)", claimed, text)
	}
	return 0, fmt.Errorf("expected a %s, but the content is binary data of another kind", claimed)
}
