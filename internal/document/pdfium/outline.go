package pdfium

import (
	"fmt"
	"strings"

	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"
)

// Outline bounds: an outline is read to at most maxBookmarks entries and
// maxOutlineDepth levels. PDFium follows the outline as the file links
// it, so a file whose outline loops would be read forever: an entry met
// twice (by its title and target, as handles are new at every visit) ends
// the walk of its level.
const (
	maxBookmarks    = 10_000
	maxOutlineDepth = 32
)

// outline reads the bookmarks in document order, each with its level and
// the index of the page it points at (-1 when none of the document's
// pages). A file with more than maxBookmarks entries is refused.
func (r *reader) outline(pages int) ([]Bookmark, error) {
	w := outlineWalk{r: r, pages: pages, seen: map[string]bool{}}
	if err := w.children(nil, 1); err != nil {
		return nil, err
	}
	return w.out, nil
}

// outlineWalk is one reading of an outline.
type outlineWalk struct {
	r     *reader
	pages int
	out   []Bookmark
	seen  map[string]bool // level, title and page of the entries read
}

// children reads the entries under parent (the top level for nil) at the
// given level, and theirs.
func (w *outlineWalk) children(parent *references.FPDF_BOOKMARK, level int) error {
	if level > maxOutlineDepth {
		return nil
	}
	first, err := w.r.inst.FPDFBookmark_GetFirstChild(&requests.FPDFBookmark_GetFirstChild{Document: w.r.doc, Bookmark: parent})
	if err != nil {
		return err
	}
	for b := first.Bookmark; b != nil; {
		if len(w.out) >= maxBookmarks {
			return fmt.Errorf("the outline has more than %d entries (the limit)", maxBookmarks)
		}
		entry := w.entry(*b, level)
		key := fmt.Sprintf("%d\x00%s\x00%d", parentKey(parent), entry.Title, entry.Page)
		if w.seen[key] {
			return nil // the outline loops back
		}
		w.seen[key] = true
		w.out = append(w.out, entry)
		if err := w.children(b, level+1); err != nil {
			return err
		}
		next, err := w.r.inst.FPDFBookmark_GetNextSibling(&requests.FPDFBookmark_GetNextSibling{Document: w.r.doc, Bookmark: *b})
		if err != nil {
			return err
		}
		b = next.Bookmark
	}
	return nil
}

// parentKey tells top-level entries (0) from nested ones (1) in the seen
// keys: the same title and page may well appear at two levels.
func parentKey(parent *references.FPDF_BOOKMARK) int {
	if parent == nil {
		return 0
	}
	return 1
}

// entry reads one bookmark's title and target page.
func (w *outlineWalk) entry(b references.FPDF_BOOKMARK, level int) Bookmark {
	e := Bookmark{Level: level, Page: -1}
	if t, err := w.r.inst.FPDFBookmark_GetTitle(&requests.FPDFBookmark_GetTitle{Bookmark: b}); err == nil {
		e.Title = strings.Join(strings.Fields(t.Title), " ")
	}
	if page, ok := w.page(b); ok && page >= 0 && page < w.pages {
		e.Page = page
	}
	return e
}

// page is the index of the page a bookmark points at, by its destination
// or by the destination of its go-to action.
func (w *outlineWalk) page(b references.FPDF_BOOKMARK) (int, bool) {
	var dest *references.FPDF_DEST
	if d, err := w.r.inst.FPDFBookmark_GetDest(&requests.FPDFBookmark_GetDest{Document: w.r.doc, Bookmark: b}); err == nil && d.Dest != nil {
		dest = d.Dest
	} else if a, err := w.r.inst.FPDFBookmark_GetAction(&requests.FPDFBookmark_GetAction{Bookmark: b}); err == nil && a.Action != nil {
		if d, err := w.r.inst.FPDFAction_GetDest(&requests.FPDFAction_GetDest{Document: w.r.doc, Action: *a.Action}); err == nil && d.Dest != nil {
			dest = d.Dest
		}
	}
	if dest == nil {
		return -1, false
	}
	idx, err := w.r.inst.FPDFDest_GetDestPageIndex(&requests.FPDFDest_GetDestPageIndex{Document: w.r.doc, Dest: *dest})
	if err != nil {
		return -1, false
	}
	return idx.Index, true
}
