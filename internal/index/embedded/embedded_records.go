package embedded

import (
	"fmt"

	"github.com/parentrag/parentrag/internal/index"
)

// recordTable holds per-slot record metadata as parallel arrays. A slot is
// assigned once per upsert and never reused until compaction renumbers the
// survivors; a replaced or deleted slot is a tombstone (its dead bit set and
// its id unindexed).
type recordTable struct {
	ids     strTable // entry i is slot i's id; only live ids are indexed
	syms    strTable // interned parent and document ids
	parent  []uint32 // slot -> syms entry
	doc     []uint32 // slot -> syms entry
	ordinal []int32
	deadBit []uint64
	dead    int // tombstoned slots
}

func newRecordTable() recordTable {
	return recordTable{ids: newStrTable(), syms: newStrTable()}
}

func (t *recordTable) slots() int { return t.ids.len() }
func (t *recordTable) live() int  { return t.slots() - t.dead }

func (t *recordTable) isDead(slot uint32) bool {
	return t.deadBit[slot>>6]&(1<<(slot&63)) != 0
}

// kill tombstones a live slot.
func (t *recordTable) kill(slot uint32) {
	t.deadBit[slot>>6] |= 1 << (slot & 63)
	t.dead++
}

// checkCapacity fails when the batch would overflow the 4 GiB string arenas.
func (t *recordTable) checkCapacity(records []index.Record) error {
	idBytes, symBytes := len(t.ids.arena), len(t.syms.arena)
	for i := range records {
		idBytes += len(records[i].ID)
		symBytes += len(records[i].ParentID) + len(records[i].DocID)
	}
	if idBytes > maxArena || symBytes > maxArena || t.slots()+len(records) >= maxArena {
		return fmt.Errorf("store would exceed 4 GiB of ids or 2^32 slots: %w", index.ErrInvalidInput)
	}
	return nil
}

// add stores r's metadata in a new slot and indexes its id. When r replaces
// a live record it returns that record's slot, which the caller tombstones.
func (t *recordTable) add(r *index.Record) (slot, old uint32, replaced bool) {
	p, found := t.ids.find(r.ID)
	slot = t.ids.add(r.ID)
	if found {
		old = t.ids.index[p] - 1
		t.ids.index[p] = slot + 1 // same string, same probe position
	} else {
		t.ids.insert(slot)
	}
	t.parent = append(t.parent, t.syms.intern(r.ParentID))
	t.doc = append(t.doc, t.syms.intern(r.DocID))
	t.ordinal = append(t.ordinal, int32(r.Ordinal))
	if int(slot>>6) >= len(t.deadBit) {
		t.deadBit = append(t.deadBit, 0)
	}
	return slot, old, found
}

// remove tombstones the live record with the given id, if any.
func (t *recordTable) remove(id string) {
	p, ok := t.ids.find(id)
	if !ok {
		return
	}
	slot := t.ids.index[p] - 1
	t.ids.removeAt(p)
	t.kill(slot)
}

func (t *recordTable) hit(slot uint32, score float32) index.Hit {
	return index.Hit{
		ID:       t.ids.str(slot),
		ParentID: t.syms.str(t.parent[slot]),
		DocID:    t.syms.str(t.doc[slot]),
		Ordinal:  int(t.ordinal[slot]),
		Score:    score,
	}
}

// compacted returns a table holding only live slots, renumbered in order
// (remap[old] is the new slot or noSlot), keeping only referenced symbols.
func (t *recordTable) compacted(remap []uint32, live int) recordTable {
	n := newRecordTable()
	n.parent = make([]uint32, 0, live)
	n.doc = make([]uint32, 0, live)
	n.ordinal = make([]int32, 0, live)
	n.ids.ends = make([]uint32, 0, live)
	n.deadBit = make([]uint64, (live+63)/64)
	symRemap := make([]uint32, t.syms.len())
	for i := range symRemap {
		symRemap[i] = noSlot
	}
	sym := func(old uint32) uint32 {
		if symRemap[old] == noSlot {
			symRemap[old] = n.syms.addBytes(t.syms.bytes(old))
		}
		return symRemap[old]
	}
	for old, s := range remap {
		if s == noSlot {
			continue
		}
		o := uint32(old)
		n.ids.addBytes(t.ids.bytes(o))
		n.parent = append(n.parent, sym(t.parent[o]))
		n.doc = append(n.doc, sym(t.doc[o]))
		n.ordinal = append(n.ordinal, t.ordinal[o])
	}
	n.ids.reindex()
	n.syms.reindex()
	return n
}

func (t *recordTable) memory() int64 {
	return t.ids.memory() + t.syms.memory() +
		4*int64(cap(t.parent)+cap(t.doc)+cap(t.ordinal)) + 8*int64(cap(t.deadBit))
}
