package source

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// documentID is the id of the document at rel, a path relative to the
// folder it was found in: the path with slashes, each byte of it that is
// not UTF-8 written %XX. Ids are JSON strings, where such a byte would
// become U+FFFD, so two names differing only there would share an id; a
// UTF-8 name spelt like an escaped one (%FF.md beside \xff.md) is then a
// duplicate id, refused by LoadPaths like any other.
func documentID(rel string) string {
	rel = filepath.ToSlash(rel)
	if utf8.ValidString(rel) {
		return rel
	}
	var b strings.Builder
	for i := 0; i < len(rel); {
		r, size := utf8.DecodeRuneInString(rel[i:])
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&b, "%%%02X", rel[i])
		} else {
			b.WriteString(rel[i : i+size])
		}
		i += size
	}
	return b.String()
}

// walkRoot is root as filepath.WalkDir must be given it to walk the
// folder it leads to: with a trailing separator when it is a link, which
// WalkDir would otherwise report as one file.
func walkRoot(root string) string {
	if info, err := os.Lstat(root); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		return root + string(filepath.Separator)
	}
	return root
}

// realFolder is root with every link resolved, absolute: what the
// targets of the links found in it are compared with.
func realFolder(root string) (string, error) {
	real, err := filepath.EvalSymlinks(root)
	if err == nil {
		real, err = filepath.Abs(real)
	}
	if err != nil {
		return "", &FileError{Path: root, Err: unwrapPathError(err)}
	}
	return real, nil
}

// checkEntry reports, as a *FileError naming path, why the document file
// at path found in a folder (realRoot, see realFolder) is left out, or
// nil to read it: a file is read when it is regular, and a link when it
// leads, through every link on the way, to a regular file inside the
// folder. A folder's documents are its own files, never what a link makes
// of /etc/passwd, nor a named pipe a read would wait on forever. A link
// that leads nowhere is read, so that it fails as an unreadable file does.
func checkEntry(realRoot, path string, d fs.DirEntry) error {
	if d.Type().IsRegular() {
		return nil
	}
	if d.Type()&fs.ModeSymlink == 0 {
		return leftOut(path, "not a regular file (%s)", d.Type())
	}
	target, err := filepath.EvalSymlinks(path)
	if err == nil {
		target, err = filepath.Abs(target)
	}
	if err != nil {
		return nil
	}
	if !within(realRoot, target) {
		return leftOut(path, "a link to %s, outside the folder %s: links are followed only inside the folder they are in", target, realRoot)
	}
	info, err := os.Stat(target)
	if err != nil {
		return leftOut(path, "a link to %s (%v)", target, unwrapPathError(err))
	}
	if !info.Mode().IsRegular() {
		return leftOut(path, "a link to %s, not a regular file", target)
	}
	return nil
}

// leftOut is the *FileError of a file of a folder that is not read.
func leftOut(path, format string, args ...any) error {
	return &FileError{Path: path, Err: fmt.Errorf(format, args...)}
}

// within reports whether path is dir or inside it, both clean and
// absolute.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
