package indexer

import "github.com/parentrag/parentrag/internal/retrieval/hierarchy"

// childFlags say which fields of an encoded child refer to its parent
// instead of being written out: a child's parent id, document id and
// text are most often its parent's id, document and a stretch of its
// text, and its id its parent's next span's, so a unit spills each child
// in a few bytes beside its parent.
const (
	childOfKnownParent = 1 << iota // its parent is the unit's, by index
	childIDFromSpan                // its id is its parent's next span's
	childDocOfParent               // its document id is its parent's
	childTextInParent              // its text is its parent's from parent start

	childFlagsAll = childOfKnownParent | childIDFromSpan | childDocOfParent | childTextInParent
)

// childRefs finds, while a unit's children are encoded in order, what
// each can refer to: its parent among the unit's, found from the
// previous child's, and each parent's spans taken so far.
type childRefs struct {
	parents []hierarchy.Parent
	last    int   // the parent of the previous child
	spans   []int // per parent, the spans children took their ids from
}

func newChildRefs(u *Unit) *childRefs {
	return &childRefs{parents: u.Parents, spans: make([]int, len(u.Parents))}
}

// of returns the index of c's parent among the unit's and the flags of
// what c refers to; without a parent found, the flags are 0.
func (r *childRefs) of(c *hierarchy.Child) (int, uint) {
	k, ok := r.parent(c.ParentID)
	if !ok {
		return 0, 0
	}
	p := &r.parents[k]
	flags := uint(childOfKnownParent)
	if j := r.spans[k]; j < len(p.Children) && p.Children[j].ID == c.ID {
		flags |= childIDFromSpan
		r.spans[k]++
	}
	if c.DocID == p.DocID {
		flags |= childDocOfParent
	}
	if ps := c.ParentStart; ps >= 0 && ps <= len(p.Text) && len(c.Text) <= len(p.Text)-ps && p.Text[ps:ps+len(c.Text)] == c.Text {
		flags |= childTextInParent
	}
	return k, flags
}

// parent returns the index of the unit's parent of the given id, looking
// at the previous child's parent and the next one first.
func (r *childRefs) parent(id string) (int, bool) {
	for _, k := range []int{r.last, r.last + 1} {
		if k < len(r.parents) && r.parents[k].ID == id {
			r.last = k
			return k, true
		}
	}
	for k := range r.parents {
		if r.parents[k].ID == id {
			r.last = k
			return k, true
		}
	}
	return 0, false
}
