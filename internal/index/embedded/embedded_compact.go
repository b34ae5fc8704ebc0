package embedded

// compact drops every tombstone: live slots are renumbered in their current
// order, postings and dense rows of dead slots are removed, and the HNSW
// graph, whose node numbers are dense rows, is rebuilt. It runs under the
// write lock and costs time linear in the store (plus the graph rebuild).
func (e *Store) compact() {
	remap, live := e.recs.remap()
	e.recs = e.recs.compacted(remap, live)
	e.sparse = e.sparse.compacted(remap)
	e.dense = e.dense.compacted(remap)
	e.graph = nil
	if e.wantGraph() {
		e.buildGraph()
	}
}

// remap numbers live slots 0..live-1 in order; dead slots map to noSlot.
func (t *recordTable) remap() ([]uint32, int) {
	remap := make([]uint32, t.slots())
	next := uint32(0)
	for s := range remap {
		if t.isDead(uint32(s)) {
			remap[s] = noSlot
			continue
		}
		remap[s] = next
		next++
	}
	return remap, int(next)
}

// wantGraph reports whether HNSW is enabled and the store holds more dense
// rows than the threshold.
func (e *Store) wantGraph() bool {
	return e.opts.HNSW && e.dense.rows() > e.opts.HNSWThreshold
}

// buildGraph indexes every dense row, tombstoned ones included (they route
// searches but are never returned).
func (e *Store) buildGraph() {
	g := newHNSWGraph(&e.dense, e.opts)
	for r := range e.dense.rows() {
		g.insert(uint32(r))
	}
	e.graph = g
}
