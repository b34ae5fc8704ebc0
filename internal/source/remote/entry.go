package remote

import (
	"errors"
	"path"
	"strings"
)

// entryKind is what an archive entry is, as far as reading it goes.
type entryKind int

const (
	regularEntry  entryKind = iota
	dirEntry                // skipped
	metaEntry               // archive bookkeeping (pax global headers): skipped
	symlinkEntry            // refused: links are never followed
	hardlinkEntry           // refused: links are never followed
	specialEntry            // refused: devices, pipes, sockets
)

// entry is an archive entry's header, independent of the archive format.
type entry struct {
	name    string // as stored in the archive
	kind    entryKind
	link    string // target of a link, when known
	size    int64  // declared size; -1 when unknown
	special string // what a special entry is: "character device"
}

// refusal says why an entry that matched Include is not read, or "" for
// a regular file.
func (e entry) refusal() string {
	switch e.kind {
	case symlinkEntry:
		return linkRefusal("symbolic", e.link)
	case hardlinkEntry:
		return linkRefusal("hard", e.link)
	case specialEntry:
		return e.special + " is not read"
	}
	return ""
}

// linkRefusal is the message for a link of the given kind.
func linkRefusal(kind, target string) string {
	if target == "" {
		return kind + " link is not followed"
	}
	return kind + " link to " + target + " is not followed"
}

// cleanPath turns an archive entry name into a clean slash path inside the
// archive root ("" for the root itself). Backslashes count as separators
// (zip files from Windows). It refuses names with a NUL byte, absolute
// names, drive letters, and names that leave the root ("../x", "a/../../x")
// with an error that says which.
func cleanPath(name string) (string, error) {
	if strings.ContainsRune(name, 0) {
		return "", errors.New("unsafe path: contains a NUL byte")
	}
	n := strings.ReplaceAll(name, `\`, "/")
	if hasDriveLetter(n) {
		return "", errors.New("unsafe path: starts with a drive letter")
	}
	if strings.HasPrefix(n, "/") {
		return "", errors.New("unsafe path: absolute")
	}
	p := path.Clean(n)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", errors.New("unsafe path: leaves the archive root")
	}
	if p == "." {
		return "", nil
	}
	return p, nil
}

// hasDriveLetter reports whether a path starts like "C:".
func hasDriveLetter(p string) bool {
	if len(p) < 2 || p[1] != ':' {
		return false
	}
	c := p[0] | 0x20 // lower case
	return c >= 'a' && c <= 'z'
}
