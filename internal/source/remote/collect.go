package remote

import (
	"cmp"
	"fmt"
	"io"
	"path"
	"slices"

	"github.com/parentrag/parentrag/internal/document"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// collector turns the files of one source into documents and refusals,
// within the spec's per-file and file-count limits.
type collector struct {
	name      string
	s         settings
	extracted *budget // the unpacked bytes, within MaxTotalBytes
	docs      []hierarchy.Document
	errs      []DocumentError
	origin    map[string]string // document id -> path it came from
	files     int               // entries admitted so far
	// hold counts the text kept of s.Memory, one file at a time when
	// lean: a lean collector keeps no document, only their count.
	hold *Hold
	lean bool
	// counted is how many documents a lean collector did not keep.
	counted int
}

// file is an entry admitted for reading: its path, and the format its
// name says (its content may tell another, see addFile).
type file struct {
	path   string
	format document.Format
}

// newCollector starts collecting for the source called name.
func newCollector(name string, s settings) *collector {
	return &collector{
		name:      name,
		s:         s,
		extracted: newBudget(s.MaxTotalBytes, "unpacked archive"),
		origin:    map[string]string{},
		hold:      newHold(s.Memory),
		lean:      s.lean,
	}
}

// admit decides whether an archive entry is read. Unsafe names are
// refused whatever Include says; directories, bookkeeping entries and
// paths that Include does not select (or Exclude does) are skipped
// silently; a selected entry counts towards MaxFiles (more fail the source)
// and is refused when it is a link or special file, of an unsupported type,
// or declared larger than MaxFileBytes.
func (c *collector) admit(e entry) (file, bool, error) {
	p, err := cleanPath(e.name)
	if err != nil {
		c.reject(e.name, err.Error())
		return file{}, false, nil
	}
	if p == "" || e.kind == dirEntry || e.kind == metaEntry || !c.s.selects(p) {
		return file{}, false, nil
	}
	if err := c.count(); err != nil {
		return file{}, false, err
	}
	f := file{path: p, format: document.ByName(p)}
	return f, c.acceptable(f, e), nil
}

// count adds one file towards MaxFiles, failing past it.
func (c *collector) count() error {
	c.files++
	if c.files > c.s.MaxFiles {
		return fmt.Errorf("%w: more than %d files match include (MaxFiles)", ErrLimit, c.s.MaxFiles)
	}
	return nil
}

// acceptable refuses (recording why) a counted entry that is not a
// regular file, of an unsupported type, or declared too large.
func (c *collector) acceptable(f file, e entry) bool {
	switch refusal := e.refusal(); {
	case refusal != "":
		c.reject(f.path, refusal)
	case f.format == document.Unknown:
		c.reject(f.path, document.UnsupportedMessage(f.path))
	case e.size > c.s.MaxFileBytes:
		c.reject(f.path, c.oversized(fmt.Sprintf("%d bytes", e.size)))
	default:
		return true
	}
	return false
}

// single admits the one file of a source that is not an archive; it is
// read whatever Include says, in the format its content, its name or
// contentType (the response's, or "") says.
func (c *collector) single(name, contentType string, r io.Reader) error {
	if err := c.count(); err != nil {
		return err
	}
	return c.read(file{path: name, format: document.ByMediaType(contentType)}, r)
}

// read reads an admitted file up to MaxFileBytes, counting it against the
// Memory, and adds its documents, refusing a larger file. Only errors
// reading r are returned, the Memory's among them. The Memory then counts
// the text its documents keep (less than the file for a PDF, maybe more
// for a zipped Word document), and nothing for a refused file or when
// lean.
func (c *collector) read(f file, r io.Reader) error {
	data, err := io.ReadAll(io.LimitReader(c.hold.counted(r), c.s.MaxFileBytes+1))
	read := int64(len(data))
	if err != nil {
		c.hold.give(read)
		return err
	}
	if read > c.s.MaxFileBytes {
		c.hold.give(read)
		c.reject(f.path, c.oversized("larger"))
		return nil
	}
	kept := c.addFile(f, data)
	if c.lean {
		kept = 0
	}
	if kept > read {
		return c.hold.take(kept - read)
	}
	c.hold.give(read - kept)
	return nil
}

// oversized is the message for a file over MaxFileBytes.
func (c *collector) oversized(size string) string {
	return fmt.Sprintf("file is %s, over the %d-byte limit (MaxFileBytes)", size, c.s.MaxFileBytes)
}

// addFile reads data, the file f, as documents in its format (see
// document.Detect; the format f names when its content and name tell
// none), refusing it, with the reason, when it cannot be read. A document
// without a title of its own is titled with the file's name. It returns
// how many bytes of text the documents hold.
func (c *collector) addFile(f file, data []byte) int64 {
	format := document.Detect(f.path, data)
	if format == document.Unknown {
		format = f.format
	}
	if format == document.Unknown {
		c.reject(f.path, document.UnsupportedMessage(f.path))
		return 0
	}
	docs, err := document.Read(format, f.path, c.id(f.path), data)
	if err != nil {
		c.reject(f.path, document.Reason(err))
		return 0
	}
	var size int64
	for _, d := range docs {
		size += int64(len(d.Text))
		if format == document.JSONLines {
			d.ID = c.id(d.ID)
		} else if d.Title == "" {
			d.Title = path.Base(f.path)
		}
		c.add(f.path, d)
	}
	return size
}

// add keeps a document unless it is empty, or an earlier one has its id,
// which would mix up their parents and children; then it is refused.
func (c *collector) add(p string, d hierarchy.Document) {
	if hierarchy.IsEmpty(d.Text) {
		c.errs = append(c.errs, DocumentError{Document: d.ID, Message: hierarchy.EmptyMessage(d.ID)})
		return
	}
	if prev, dup := c.origin[d.ID]; dup {
		c.reject(p, fmt.Sprintf("document id %q is also the id of a document in %s", d.ID, prev))
		return
	}
	c.origin[d.ID] = p
	if c.lean {
		c.counted++
		return
	}
	c.docs = append(c.docs, d)
}

// id is the document id of a path: the source name, a slash, the path.
func (c *collector) id(p string) string {
	return c.name + "/" + p
}

// reject records why the entry at p is not read.
func (c *collector) reject(p, message string) {
	c.errs = append(c.errs, DocumentError{Document: c.id(p), Message: message})
}

// result gives the documents sorted by id and the refusals sorted by
// document, then message.
func (c *collector) result() Result {
	slices.SortFunc(c.docs, func(a, b hierarchy.Document) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(c.errs, func(a, b DocumentError) int {
		return cmp.Or(cmp.Compare(a.Document, b.Document), cmp.Compare(a.Message, b.Message))
	})
	res := Result{Documents: c.docs, Errors: c.errs, Count: len(c.docs) + c.counted, hold: c.hold}
	if c.lean {
		// It holds nothing: no one need release it.
		c.hold.Release()
		res.hold = nil
	}
	return res
}
