// Package source turns where documents come from (files and folders for
// now) into documents, refusing broken input with an error that names the
// file and the problem.
package source

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
	"github.com/parentrag/parentrag/internal/retrieval/split"
)

// Extensions read as documents: Markdown and text files become one document
// each; JSON Lines files hold one document per line. Source code
// (split.CodeExtensions: .go, .py, .ts, ...) is read too.
var Extensions = []string{".md", ".markdown", ".txt", ".jsonl", ".jsonl.gz"}

// FileError names the file (and line, for JSON Lines) a problem is in.
type FileError struct {
	Path string
	Line int
	Err  error
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// LoadPaths reads every document under paths: files are read whatever their
// extension, folders are walked for files with one of Extensions, in
// lexical order. A document's id is its path relative to the folder it was
// found in (the file name for a file given directly), each byte of it that
// is not UTF-8 written %XX. A link in a folder is followed only to a
// regular file inside that folder (see LoadPathsReport). It fails on the first
// unreadable, binary or non-UTF-8 file, when two documents share an id (their
// parents and children would be mixed up), and when nothing was found.
// Empty and white-space-only documents are left out (see LoadPathsReport).
func LoadPaths(paths []string) ([]hierarchy.Document, error) {
	docs, _, err := LoadPathsReport(paths)
	return docs, err
}

// LoadPathsReport is LoadPaths that also returns the documents it left out,
// as errors that name them: those empty or only white space, and the
// files of a folder that are not regular files or links to one inside the
// folder (a link out of it, to /etc/passwd say, is never followed).
func LoadPathsReport(paths []string) ([]hierarchy.Document, []error, error) {
	var docs []hierarchy.Document
	var skipped []error
	seen := map[string]string{} // document id -> the path it came from
	for _, p := range paths {
		found, refused, err := loadPath(p)
		if err != nil {
			return nil, nil, err
		}
		skipped = append(skipped, refused...)
		for _, f := range found {
			if prev, dup := seen[f.doc.ID]; dup {
				return nil, nil, &FileError{Path: f.path, Err: fmt.Errorf("document id %q is also the id of a document in %s", f.doc.ID, prev)}
			}
			seen[f.doc.ID] = f.path
			if hierarchy.IsEmpty(f.doc.Text) {
				skipped = append(skipped, &FileError{Path: f.path, Err: errors.New(hierarchy.EmptyMessage(f.doc.ID))})
				continue
			}
			docs = append(docs, f.doc)
		}
	}
	if len(docs) == 0 {
		what := ""
		if len(skipped) > 0 {
			what = fmt.Sprintf(" (%d left out: empty, or not regular files of the folder)", len(skipped))
		}
		return nil, skipped, fmt.Errorf("no documents found in %s (looked for %s and source code)%s", strings.Join(paths, ", "), strings.Join(Extensions, " "), what)
	}
	return docs, skipped, nil
}

// found is a document and the file it was read from.
type found struct {
	doc  hierarchy.Document
	path string
}

// loadPath reads one file or walks one folder, returning as well the
// files of the folder it left out (see checkEntry).
func loadPath(root string) ([]found, []error, error) {
	info, err := os.Stat(root)
	if err != nil {
		return nil, nil, &FileError{Path: root, Err: unwrapPathError(err)}
	}
	if !info.IsDir() {
		docs, err := loadFound(root, documentID(filepath.Base(root)))
		return docs, nil, err
	}
	files, refused, err := listFiles(root)
	if err != nil {
		return nil, nil, err
	}
	var out []found
	for _, rel := range files {
		docs, err := loadFound(filepath.Join(root, rel), documentID(rel))
		if err != nil {
			return nil, nil, err
		}
		out = append(out, docs...)
	}
	return out, refused, nil
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

// listFiles returns the document files under root, relative to it, sorted,
// and those it leaves out (see checkEntry).
func listFiles(root string) (files []string, refused []error, err error) {
	realRoot, err := realFolder(root)
	if err != nil {
		return nil, nil, err
	}
	err = filepath.WalkDir(walkRoot(root), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return &FileError{Path: path, Err: unwrapPathError(err)}
		}
		if d.IsDir() {
			return skipIndexDir(path)
		}
		if !hasDocumentExtension(path) {
			return nil
		}
		if err := checkEntry(realRoot, path, d); err != nil {
			refused = append(refused, err)
			return nil
		}
		rel, err := filepath.Rel(root, path)
		files = append(files, rel)
		return err
	})
	sort.Strings(files)
	return files, refused, err
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

// hasDocumentExtension reports whether path ends in one of Extensions or
// names source code.
func hasDocumentExtension(path string) bool {
	for _, ext := range Extensions {
		if strings.HasSuffix(strings.ToLower(path), ext) {
			return true
		}
	}
	return split.IsCode(split.LanguageOfPath(path))
}

// utf8BOM is the byte-order mark some editors put at the start of UTF-8
// files; it is not part of the text.
var utf8BOM = []byte("\xef\xbb\xbf")

// LoadFile reads one file as documents with the given id (JSON Lines files
// carry their own ids). A leading byte-order mark is dropped. Source code
// (by its extension, or a "#!" line naming its interpreter) records its
// language in the document's metadata (hierarchy.MetaLanguage) and has no
// title.
func LoadFile(path, id string) ([]hierarchy.Document, error) {
	if lower := strings.ToLower(path); strings.HasSuffix(lower, ".jsonl") || strings.HasSuffix(lower, ".jsonl.gz") {
		return loadJSONLines(path)
	}
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	if err := CheckText(data); err != nil {
		return nil, &FileError{Path: path, Err: err}
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	text := string(data)
	if lang := split.DetectLanguage(path, text); split.IsCode(lang) {
		return []hierarchy.Document{{ID: id, Text: text, Metadata: map[string]string{hierarchy.MetaLanguage: string(lang)}}}, nil
	}
	return []hierarchy.Document{{ID: id, Title: MarkdownTitle(text), Text: text}}, nil
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

// CheckText refuses data that is binary (holds a NUL byte) or not valid
// UTF-8, naming the byte offset of the first bad byte.
func CheckText(data []byte) error { return checkTextAt(data, 0) }

// CheckString is CheckText for text held in a string, which it does not
// copy unless the text is refused.
func CheckString(text string) error {
	if strings.IndexByte(text, 0) < 0 && utf8.ValidString(text) {
		return nil
	}
	return CheckText([]byte(text))
}

// checkTextAt is CheckText for data that starts at byte offset base of its
// file: the offsets it names count from the start of the file.
func checkTextAt(data []byte, base int) error {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return fmt.Errorf("binary file (NUL byte at offset %d)", base+i)
	}
	if !utf8.Valid(data) {
		return fmt.Errorf("invalid UTF-8 at byte offset %d", base+firstInvalidUTF8(data))
	}
	return nil
}

// firstInvalidUTF8 returns the offset of the first byte that does not start
// a valid UTF-8 sequence.
func firstInvalidUTF8(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(data)
}

// EachJSONLine calls fn with every non-blank line of data, the contents of
// the JSON Lines file path. An error from fn is returned as a *FileError
// naming the file and the line.
func EachJSONLine(path string, data []byte, fn func(line []byte) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 256<<20)
	for line := 1; sc.Scan(); line++ {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		if err := fn(raw); err != nil {
			return &FileError{Path: path, Line: line, Err: err}
		}
	}
	if err := sc.Err(); err != nil {
		return &FileError{Path: path, Err: err}
	}
	return nil
}

// titleLines is how many lines MarkdownTitle looks at.
const titleLines = 50

// MarkdownTitle returns the text of the first level-one ATX heading ("# Title")
// among the first lines, if any. As in CommonMark, the heading may be
// indented up to three spaces and lose its closing #s, and lines inside
// fenced code blocks are not headings (a shell comment is no title). A
// leading byte-order mark is ignored.
func MarkdownTitle(text string) string {
	rest := strings.TrimPrefix(text, "\ufeff")
	fence := ""
	for n := 0; n < titleLines && rest != ""; n++ {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.TrimRight(line, "\r")
		trimmed := strings.TrimLeft(line, " ")
		if len(line)-len(trimmed) > 3 {
			continue // indented code
		}
		if fence != "" {
			if closesFence(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if fence = opensFence(trimmed); fence != "" {
			continue
		}
		if title, ok := levelOneHeading(trimmed); ok && title != "" {
			return title
		}
	}
	return ""
}

// opensFence returns the run of three or more backticks or tildes a line
// opens a fenced code block with, or "".
func opensFence(line string) string {
	for _, c := range []string{"`", "~"} {
		n := len(line) - len(strings.TrimLeft(line, c))
		if n >= 3 {
			return line[:n]
		}
	}
	return ""
}

// closesFence reports whether line closes a block opened by fence: at
// least as many of the same character, then only white space.
func closesFence(line, fence string) bool {
	run := strings.TrimLeft(line, fence[:1])
	return len(line)-len(run) >= len(fence) && strings.TrimSpace(run) == ""
}

// levelOneHeading returns the text of a "# " heading line without its
// optional closing sequence of #s.
func levelOneHeading(line string) (string, bool) {
	if line != "#" && !strings.HasPrefix(line, "# ") && !strings.HasPrefix(line, "#\t") {
		return "", false
	}
	title := strings.TrimSpace(line[1:])
	if closed := strings.TrimRight(title, "#"); closed == "" {
		title = ""
	} else if strings.HasSuffix(closed, " ") || strings.HasSuffix(closed, "\t") {
		title = strings.TrimSpace(closed)
	}
	return title, true
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
