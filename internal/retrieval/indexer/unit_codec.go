package indexer

import (
	"cmp"
	"encoding/binary"
	"errors"
	"slices"
	"strings"

	"github.com/parentrag/parentrag/internal/index/bm25"
	"github.com/parentrag/parentrag/internal/retrieval/hierarchy"
)

// Unit payload layout (integers are varints, unsigned for counts and
// lengths, signed for offsets; strings are a length then bytes; lists a
// count then their items). A spill holds the split field, then the
// analyses with ids for terms (see spillAnalyses); a unit held in memory
// between the passes packs its analyses as below (see packedAnalyses).
//
//	split field: length of the split | split
//	split:    lead text | lead end | parents | children | ancestors
//	analyses: child analyses | context analyses
//	parent:   id | document id | title | heading path (strings) | level |
//	          parent id | pages (0 for none, else 1, first, last) |
//	          ordinal | text | start | spans (id, start, end) | metadata
//	          (count, then key and value, keys sorted)
//	child:    flags (see childFlags) | its parent's index when known,
//	          else its parent id | id, unless its parent's next span's |
//	          document id, unless its parent's | ordinal | start | parent
//	          start | text: its length when it is its parent's text from
//	          parent start, else the text
//	analyses: 0 for none, else 1 + count, then per analysis its tokens and
//	          its terms (term, count)

// unitWriter appends a unit payload.
type unitWriter struct{ b []byte }

func (w *unitWriter) uint(v uint64) { w.b = binary.AppendUvarint(w.b, v) }
func (w *unitWriter) int(v int)     { w.b = binary.AppendVarint(w.b, int64(v)) }
func (w *unitWriter) str(s string)  { w.uint(uint64(len(s))); w.b = append(w.b, s...) }
func (w *unitWriter) strs(s []string) {
	w.uint(uint64(len(s)))
	for _, x := range s {
		w.str(x)
	}
}

// encodeSplitField serialises the split of u as a unit payload begins:
// its length, then the split. It writes the split once, into a buffer
// sized for it (see splitSizeHint), with room before it for the length.
func encodeSplitField(u *Unit) []byte {
	const room = binary.MaxVarintLen64
	w := &unitWriter{b: make([]byte, room, room+splitSizeHint(u))}
	w.split(u)
	var head [room]byte
	n := binary.PutUvarint(head[:], uint64(len(w.b)-room))
	field := w.b[room-n:]
	copy(field, head[:n])
	return field
}

// splitSizeHint is about the length of u's encoded split: its strings'
// bytes and room for every integer. A split longer than it only costs
// the buffer's growth.
func splitSizeHint(u *Unit) int {
	n := len(u.LeadText) + 4*binary.MaxVarintLen64
	for _, list := range [][]hierarchy.Parent{u.Parents, u.Ancestors} {
		for i := range list {
			n += parentSizeHint(&list[i])
		}
	}
	for i := range u.Children {
		c := &u.Children[i]
		n += len(c.ID) + len(c.ParentID) + len(c.DocID) + len(c.Text) + 8*binary.MaxVarintLen64
	}
	return n
}

// parentSizeHint is about the length of p encoded.
func parentSizeHint(p *hierarchy.Parent) int {
	n := len(p.ID) + len(p.DocID) + len(p.Title) + len(p.Text) + len(p.Level) + len(p.ParentID) + 13*binary.MaxVarintLen64
	for _, h := range p.HeadingPath {
		n += len(h) + binary.MaxVarintLen64
	}
	for _, c := range p.Children {
		n += len(c.ID) + 3*binary.MaxVarintLen64
	}
	for k, v := range p.Metadata {
		n += len(k) + len(v) + 2*binary.MaxVarintLen64
	}
	return n
}

// packedAnalyses returns u's analyses encoded: u.packed when the build
// packed them already, and otherwise encodes them, keeping the result in
// u.packed so that the first pass does not encode them again.
func (u *Unit) packedAnalyses() []byte {
	if u.packed == nil {
		u.packed = encodeAnalyses(u)
	}
	return u.packed
}

// encodeAnalyses serialises the analyses of u.
func encodeAnalyses(u *Unit) []byte {
	w := &unitWriter{}
	w.analyses(u.ChildTerms)
	w.analyses(u.ContextTerms)
	return w.b
}

// decodeAnalyses decodes what encodeAnalyses wrote into u.
func decodeAnalyses(packed []byte, u *Unit) error {
	r := &unitReader{s: string(packed)}
	r.unitAnalyses(u)
	return r.err
}

// split appends what splitting made of u's document.
func (w *unitWriter) split(u *Unit) {
	w.str(u.LeadText)
	w.int(u.LeadEnd)
	w.uint(uint64(len(u.Parents)))
	for i := range u.Parents {
		w.parent(&u.Parents[i])
	}
	w.uint(uint64(len(u.Children)))
	refs := newChildRefs(u)
	for i := range u.Children {
		w.child(&u.Children[i], refs)
	}
	w.uint(uint64(len(u.Ancestors)))
	for i := range u.Ancestors {
		w.parent(&u.Ancestors[i])
	}
}

// child appends one child, writing what its parent already holds (its
// id, its document, its text) as references to it.
func (w *unitWriter) child(c *hierarchy.Child, refs *childRefs) {
	k, flags := refs.of(c)
	w.uint(uint64(flags))
	if flags&childOfKnownParent != 0 {
		w.uint(uint64(k))
	} else {
		w.str(c.ParentID)
	}
	if flags&childIDFromSpan == 0 {
		w.str(c.ID)
	}
	if flags&childDocOfParent == 0 {
		w.str(c.DocID)
	}
	w.int(c.Ordinal)
	w.int(c.Start)
	w.int(c.ParentStart)
	if flags&childTextInParent != 0 {
		w.uint(uint64(len(c.Text)))
	} else {
		w.str(c.Text)
	}
}

// parent appends one parent.
func (w *unitWriter) parent(p *hierarchy.Parent) {
	w.str(p.ID)
	w.str(p.DocID)
	w.str(p.Title)
	w.strs(p.HeadingPath)
	w.str(string(p.Level))
	w.str(p.ParentID)
	w.pages(p.Pages)
	w.int(p.Ordinal)
	w.str(p.Text)
	w.int(p.Start)
	w.uint(uint64(len(p.Children)))
	for _, s := range p.Children {
		w.str(s.ID)
		w.int(s.Start)
		w.int(s.End)
	}
	keys := make([]string, 0, len(p.Metadata))
	for k := range p.Metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.uint(uint64(len(keys)))
	for _, k := range keys {
		w.str(k)
		w.str(p.Metadata[k])
	}
}

// pages appends a page range, telling none from any.
func (w *unitWriter) pages(p *hierarchy.Pages) {
	if p == nil {
		w.uint(0)
		return
	}
	w.uint(1)
	w.int(p.First)
	w.int(p.Last)
}

// analyses appends a list of analyses, telling none from an empty list.
func (w *unitWriter) analyses(as []bm25.Analysis) {
	w.analysisList(as, func(a bm25.Analysis) {
		for i, t := range a.Terms {
			w.str(t)
			w.uint(uint64(a.Counts[i]))
		}
	})
}

// analysisList appends a list of analyses, telling none from an empty
// list: its length, then per analysis its tokens, its number of terms and
// what terms appends of them.
func (w *unitWriter) analysisList(as []bm25.Analysis, terms func(bm25.Analysis)) {
	if as == nil {
		w.uint(0)
		return
	}
	w.uint(uint64(len(as)) + 1)
	for _, a := range as {
		w.uint(uint64(a.Tokens))
		w.uint(uint64(len(a.Terms)))
		terms(a)
	}
}

// errUnitPayload reports a payload that does not decode.
var errUnitPayload = errors.New("malformed unit payload")

// unitReader decodes a unit payload held in one string, so that every
// decoded string is a slice of it rather than a copy, but for the texts
// (see text) unless view is set.
type unitReader struct {
	s    string
	err  error
	view bool
}

// uint reads an unsigned varint.
func (r *unitReader) uint() uint64 {
	var v uint64
	for shift := 0; shift < 64 && r.err == nil; shift += 7 {
		if len(r.s) == 0 {
			break
		}
		c := r.s[0]
		r.s = r.s[1:]
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
	r.err = errUnitPayload
	return 0
}

// int reads a signed varint.
func (r *unitReader) int() int {
	u := r.uint()
	return int(int64(u>>1) ^ -int64(u&1))
}

// count reads a list length, refusing one longer than the bytes left.
func (r *unitReader) count() int {
	n := r.uint()
	if n > uint64(len(r.s)) {
		r.err = errUnitPayload
		return 0
	}
	return int(n)
}

// str reads a string.
func (r *unitReader) str() string {
	n := r.count()
	if r.err != nil {
		return ""
	}
	s := r.s[:n]
	r.s = r.s[n:]
	return s
}

// text reads a string into memory of its own, so that what a build keeps
// (parents, children) never holds the payload, whose analyses it drops.
// With view set it is a slice too, for a unit dropped with its payload.
func (r *unitReader) text() string {
	if r.view {
		return r.str()
	}
	return strings.Clone(r.str())
}

// strs reads a list of strings; none reads as nil.
func (r *unitReader) strs() []string {
	n := r.count()
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.text()
	}
	return out
}

// unitAnalyses decodes the analyses of a unit into u; they must end the
// input.
func (r *unitReader) unitAnalyses(u *Unit) {
	u.ChildTerms = r.analyses()
	u.ContextTerms = r.analyses()
	if r.err == nil && r.s != "" {
		r.err = errUnitPayload
	}
}

// splitField decodes the split field of a unit payload into u, its texts
// in memory of their own.
func (r *unitReader) splitField(u *Unit) {
	split := &unitReader{s: r.str()}
	split.split(u)
	r.err = cmp.Or(r.err, split.err)
	if r.err == nil && split.s != "" {
		r.err = errUnitPayload
	}
}

// split decodes the split of a unit into u.
func (r *unitReader) split(u *Unit) {
	u.LeadText, u.LeadEnd = r.text(), r.int()
	u.Parents = make([]hierarchy.Parent, r.count())
	for i := range u.Parents {
		r.parent(&u.Parents[i])
	}
	u.Children = make([]hierarchy.Child, r.count())
	spans := make([]int, len(u.Parents))
	for i := range u.Children {
		r.child(u, spans, &u.Children[i])
	}
	if n := r.count(); n > 0 {
		u.Ancestors = make([]hierarchy.Parent, n)
		for i := range u.Ancestors {
			r.parent(&u.Ancestors[i])
		}
	}
}

// child reads one child into c, taking what it references from the
// unit's parents; spans holds, per parent, how many of its spans
// children took their ids from so far.
func (r *unitReader) child(u *Unit, spans []int, c *hierarchy.Child) {
	flags := r.uint()
	var p *hierarchy.Parent
	if flags&^childFlagsAll != 0 {
		r.err = errUnitPayload
	}
	fromSpan := false
	if flags&childOfKnownParent != 0 {
		if k := r.uint(); k < uint64(len(u.Parents)) {
			p = &u.Parents[k]
			c.ParentID = p.ID
			if flags&childIDFromSpan != 0 && spans[k] < len(p.Children) {
				c.ID, fromSpan = p.Children[spans[k]].ID, true
				spans[k]++
			}
		} else {
			r.err = errUnitPayload
		}
	} else {
		c.ParentID = r.text()
	}
	switch {
	case flags&childIDFromSpan == 0:
		c.ID = r.text()
	case !fromSpan:
		r.err = errUnitPayload
	}
	switch {
	case flags&childDocOfParent == 0:
		c.DocID = r.text()
	case p != nil:
		c.DocID = p.DocID
	default:
		r.err = errUnitPayload
	}
	c.Ordinal, c.Start, c.ParentStart = r.int(), r.int(), r.int()
	if flags&childTextInParent == 0 {
		c.Text = r.text()
		return
	}
	n := r.uint()
	if p == nil || c.ParentStart < 0 || c.ParentStart > len(p.Text) || n > uint64(len(p.Text)-c.ParentStart) {
		r.err = errUnitPayload
		return
	}
	c.Text = p.Text[c.ParentStart : c.ParentStart+int(n)]
}

// parent reads one parent into p.
func (r *unitReader) parent(p *hierarchy.Parent) {
	p.ID, p.DocID, p.Title, p.HeadingPath = r.text(), r.text(), r.text(), r.strs()
	p.Level, p.ParentID = hierarchy.Level(r.text()), r.text()
	if r.uint() != 0 {
		p.Pages = &hierarchy.Pages{First: r.int(), Last: r.int()}
	}
	p.Ordinal, p.Text, p.Start = r.int(), r.text(), r.int()
	if n := r.count(); n > 0 {
		p.Children = make([]hierarchy.Span, n)
		for i := range p.Children {
			p.Children[i] = hierarchy.Span{ID: r.text(), Start: r.int(), End: r.int()}
		}
	}
	if n := r.count(); n > 0 {
		p.Metadata = make(map[string]string, n)
		for range n {
			k := r.text()
			p.Metadata[k] = r.text()
		}
	}
}

// analyses reads a list of analyses.
func (r *unitReader) analyses() []bm25.Analysis {
	out := r.analysisList()
	for i := range out {
		out[i].Tokens = int(r.uint())
		m := r.count()
		out[i].Terms, out[i].Counts = make([]string, m), make([]uint32, m)
		for j := range m {
			out[i].Terms[j] = r.str()
			out[i].Counts[j] = uint32(r.uint())
		}
	}
	return out
}

// analysisList reads the length of a list of analyses and returns a list
// that long, its analyses to be read; nil for none.
func (r *unitReader) analysisList() []bm25.Analysis {
	n := r.uint()
	if n == 0 || n-1 > uint64(len(r.s)) {
		if n != 0 {
			r.err = errUnitPayload
		}
		return nil
	}
	return make([]bm25.Analysis, n-1)
}
