// Package source turns files and folders into documents, read by package
// document in their format, refusing broken input with an error that names
// the file and the problem.
package source

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/parentrag/parentrag/internal/document"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/telemetry"
)

// Extensions are the file extensions a folder walk reads: every format
// package document reads (source code included), and JSON Lines
// compressed with gzip.
var Extensions = append(document.Extensions(), ".jsonl.gz")

// FileError names the file (and line, for JSON Lines) a problem is in.
type FileError = document.FileError

// Loaded is what LoadPathsReport read.
type Loaded struct {
	// Docs are the documents, in the order of the paths and, within a
	// folder, of the files' paths.
	Docs []hierarchy.Document
	// Refused are the files that could not be read as documents (an
	// unreadable, binary or non-UTF-8 file, a damaged or encrypted PDF, a
	// bad JSON Lines line), each a *FileError that names it and says why.
	Refused []error
	// LeftOut are the files of a folder that are not regular files or
	// links to one inside the folder (a link out of it, to /etc/passwd
	// say, is never followed), as errors that name them.
	LeftOut []error
	// Empty are the documents left out because they are empty or only
	// white space, as errors that name them.
	Empty []error
}

// LoadPaths reads every document under paths: files are read whatever their
// extension, folders are walked for files with one of Extensions, in
// lexical order. A document's id is its path relative to the folder it was
// found in (the file name for a file given directly), each byte of it that
// is not UTF-8 written %XX. A link in a folder is followed only to a
// regular file inside that folder (see LoadPathsReport). It fails on the
// first file it cannot read as documents, when two documents share an id (their
// parents and children would be mixed up), and when nothing was found.
// Empty and white-space-only documents are left out (see LoadPathsReport).
func LoadPaths(paths []string) ([]hierarchy.Document, error) {
	l, err := LoadPathsReport(context.Background(), paths)
	if err != nil {
		return nil, err
	}
	if len(l.Refused) > 0 {
		return nil, l.Refused[0]
	}
	return l.Docs, nil
}

// LoadPathsReport is LoadPaths that reads what it can: a file it cannot
// read as documents is reported in Refused, one it does not read in
// LeftOut, and the others are read. It fails only on a path that does not
// exist, on two documents that share an id, and when no document was
// read. While tracing is on, the read is a span of the read_sources stage
// below ctx's, and each path one of the extract stage below it.
func LoadPathsReport(ctx context.Context, paths []string) (l Loaded, err error) {
	ctx, span := telemetry.Start(ctx, telemetry.SpanReadSources)
	defer func() { endRead(span, len(paths), l, err) }()
	seen := map[string]string{} // document id -> the path it came from
	for _, p := range paths {
		found, refused, leftOut, err := extract(ctx, p)
		if err != nil {
			return Loaded{}, err
		}
		l.Refused = append(l.Refused, refused...)
		l.LeftOut = append(l.LeftOut, leftOut...)
		for _, f := range found {
			if prev, dup := seen[f.doc.ID]; dup {
				return Loaded{}, &FileError{Path: f.path, Err: fmt.Errorf("document id %q is also the id of a document in %s", f.doc.ID, prev)}
			}
			seen[f.doc.ID] = f.path
			if hierarchy.IsEmpty(f.doc.Text) {
				l.Empty = append(l.Empty, &FileError{Path: f.path, Err: errors.New(hierarchy.EmptyMessage(f.doc.ID))})
				continue
			}
			l.Docs = append(l.Docs, f.doc)
		}
	}
	if len(l.Docs) == 0 {
		return l, noDocuments(paths, l)
	}
	return l, nil
}

// noDocuments is the error of paths that gave no document, saying what was
// left out.
func noDocuments(paths []string, l Loaded) error {
	var left []string
	if n := len(l.Refused); n > 0 {
		left = append(left, fmt.Sprintf("%d unreadable: first %v", n, l.Refused[0]))
	}
	if n := len(l.LeftOut) + len(l.Empty); n > 0 {
		left = append(left, fmt.Sprintf("%d left out: empty, or not regular files of the folder", n))
	}
	what := ""
	if len(left) > 0 {
		what = " (" + strings.Join(left, "; ") + ")"
	}
	return fmt.Errorf("no documents found in %s (looked for %s)%s", strings.Join(paths, ", "), document.ReadableExtensions(), what)
}

// found is a document and the file it was read from.
type found struct {
	doc  hierarchy.Document
	path string
}

// loadPath reads one file or walks one folder, returning the documents
// read, the files refused and those left out (see checkEntry). Only a
// root that cannot be found fails.
func loadPath(root string) (out []found, refused, leftOut []error, err error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, nil, nil, &FileError{Path: root, Err: unwrapPathError(err)}
	}
	if !info.IsDir() {
		docs, err := loadFound(root, documentID(filepath.Base(root)))
		return docs, errorList(err), nil, nil
	}
	files, refused, leftOut, err := listFiles(root)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, rel := range files {
		docs, err := loadFound(filepath.Join(root, rel), documentID(rel))
		if err != nil {
			refused = append(refused, err)
			continue
		}
		out = append(out, docs...)
	}
	return out, refused, leftOut, nil
}

// errorList is err alone in a list, or nil.
func errorList(err error) []error {
	if err == nil {
		return nil
	}
	return []error{err}
}

// loadFound reads one file as documents, each paired with the file's path.
func loadFound(path, id string) ([]found, error) {
	docs, err := LoadFile(path, id)
	if err != nil {
		return nil, err
	}
	out := make([]found, len(docs))
	for i, d := range docs {
		out[i] = found{doc: d, path: path}
	}
	return out, nil
}

// listFiles returns the document files under root, relative to it,
// sorted, the folders that cannot be read, and the files that are not
// regular or links to one inside root (see checkEntry).
func listFiles(root string) (files []string, refused, leftOut []error, err error) {
	realRoot, err := realFolder(root)
	if err != nil {
		return nil, nil, nil, err
	}
	filepath.WalkDir(walkRoot(root), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			refused = append(refused, &FileError{Path: path, Err: unwrapPathError(err)})
			return nil // a folder that cannot be read is skipped
		}
		if d.IsDir() {
			return skipIndexDir(path)
		}
		if !hasDocumentExtension(path) {
			return nil
		}
		if err := checkEntry(realRoot, path, d); err != nil {
			leftOut = append(leftOut, err)
			return nil
		}
		if rel, err := filepath.Rel(root, path); err == nil {
			files = append(files, rel)
		}
		return nil
	})
	sort.Strings(files)
	return files, refused, leftOut, nil
}

// indexManifest marks a parentrag index directory (bundle.ManifestFile).
const indexManifest = "manifest.json"

// skipIndexDir skips a directory that holds a parentrag index (its
// parents.jsonl is not a corpus) or is hidden, such as .git.
func skipIndexDir(path string) error {
	if name := filepath.Base(path); len(name) > 1 && strings.HasPrefix(name, ".") {
		return filepath.SkipDir
	}
	if _, err := os.Stat(filepath.Join(path, indexManifest)); err == nil {
		return filepath.SkipDir
	}
	if IsBundleTemp(path) {
		return filepath.SkipDir
	}
	return nil
}

// bundleTempName matches the folders an index is built in before it is
// renamed into place (<out>.tmp-<digits>, os.MkdirTemp's pattern) and the
// one a replaced index is moved to (<out>.tmp-<digits>.old).
var bundleTempName = regexp.MustCompile(`^.+\.tmp-[0-9]+(\.old)?$`)

// bundleFiles are the names an index folder holds.
var bundleFiles = map[string]bool{indexManifest: true, "parents.jsonl": true, "parents.idx": true, "children": true, "lexical.stats": true,
	"segments": true, "parents": true}

// buildScratchName matches the files a build keeps in the folder of the
// index it writes until it is done: a file of bundleFiles being written
// (<name>.tmp-<digits>) and the units spilled between its passes.
var buildScratchName = regexp.MustCompile(`^(manifest\.json|parents\.jsonl|parents\.idx|lexical\.stats)\.tmp-[0-9]+$|^\.units-[0-9]+\.spill$`)

// IsBundleTemp reports whether dir is a temporary folder of an index being
// written (or left by a killed run): its name has the temporary pattern and
// it holds nothing but index files and a build's scratch. Such a folder
// is never read as documents.
func IsBundleTemp(dir string) bool {
	if !bundleTempName.MatchString(filepath.Base(dir)) {
		return false
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !bundleFiles[e.Name()] && !buildScratchName.MatchString(e.Name()) {
			return false
		}
	}
	return true
}

// hasDocumentExtension reports whether path ends in one of Extensions.
func hasDocumentExtension(path string) bool {
	for _, ext := range Extensions {
		if strings.HasSuffix(strings.ToLower(path), ext) {
			return true
		}
	}
	return false
}

// LoadFile reads one file as documents with the given id (JSON Lines files
// carry their own), in the format document.Detect tells from its content
// and name (source code by its extension or a "#!" line naming its
// interpreter); a file of no known format is read as Markdown when it is
// text. A file whose name ends in .gz is decompressed first, and a JSON
// Lines file is read a line at a time.
func LoadFile(path, id string) ([]hierarchy.Document, error) {
	name := strings.TrimSuffix(strings.ToLower(path), ".gz")
	if document.ByName(name) == document.JSONLines {
		return loadJSONLines(path)
	}
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	return document.Read(document.Detect(name, data), path, id, data)
}

// loadJSONLines reads a JSON Lines corpus a line at a time.
func loadJSONLines(path string) ([]hierarchy.Document, error) {
	r, closeFile, err := openMaybeGzip(path)
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	defer closeFile()
	return document.ReadJSONLines(r, path)
}

// ReadFile reads a file, decompressing it when its name ends in .gz (in any
// case, as the extensions of LoadPaths are matched). Errors
// are *FileError naming the file.
func ReadFile(path string) ([]byte, error) {
	data, err := readMaybeGzip(path)
	if err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	return data, nil
}

// readMaybeGzip reads a file, decompressing it when its name ends in .gz.
func readMaybeGzip(path string) ([]byte, error) {
	r, closeFile, err := openMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	defer closeFile()
	return io.ReadAll(r)
}

// openMaybeGzip opens a file to read, decompressing it when its name ends
// in .gz; closeFile releases it.
func openMaybeGzip(path string) (r io.Reader, closeFile func(), err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, unwrapPathError(err)
	}
	if !strings.HasSuffix(strings.ToLower(path), ".gz") {
		return f, func() { f.Close() }, nil
	}
	gz, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("not gzip data: %w", err)
	}
	return gz, func() { gz.Close(); f.Close() }, nil
}

// unwrapPathError drops the path from an *fs.PathError, since FileError
// already names it.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}
